import { expect } from 'chai';
import type { RunResult } from '../../src/result.js';
import { type CliProcess, spawnCli } from '../helpers/cli-process.js';
import { logLines, waitForLog } from '../helpers/processes.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { enqueue, expectNoDrift, makeAccount, maxOverlap, waitForStates } from '../helpers/queue-rows.js';
import { skipUnlessRealRuns } from '../helpers/results-stack.js';

// Whole processes, as deployed: two runner processes on one database, and `npm start`.

describe('runner processes', function () {
  let t: TestDatabase;
  const procs: CliProcess[] = [];

  before(async () => {
    t = await freshDatabase('runner_processes');
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
  });
  after(async () => {
    await t?.drop();
  });

  it('two runners on one database run every job exactly once within each account limit', async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const two = await makeAccount(t.db); // Free plan: 2 at once
    const one = await makeAccount(t.db, { running: 1 });
    const jobs: { id: string; account: string; marker: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const account = i % 3 === 0 ? one : two;
      const marker = `job-${i}`;
      const id = await enqueue(t.db, account, { code: `import time\ntime.sleep(0.2)\nprint(${JSON.stringify(marker)})\n` });
      jobs.push({ id, account, marker });
    }
    const common = { RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: '3', RUNBOX_POLL_MS: '200' };
    // Distinct uid ranges: on one host, two runners must not share sandbox users.
    const a = spawnCli('runner.js', { ...common, RUNBOX_RUNNER_ID: 'proc-a', RUNBOX_SANDBOX_UID_BASE: '61000' });
    const b = spawnCli('runner.js', { ...common, RUNBOX_RUNNER_ID: 'proc-b', RUNBOX_SANDBOX_UID_BASE: '61100' });
    procs.push(a, b);
    await Promise.all([waitForLog(a, /runner started/), waitForLog(b, /runner started/)]);

    await waitForStates(
      t.db,
      jobs.map((j) => j.id),
      ['finished', 'failed'],
    );
    const rows = await t.db.selectFrom('submissions').selectAll().execute();
    for (const j of jobs) {
      const row = rows.find((r) => r.id === j.id)!;
      const result = row.result as RunResult;
      expect(row.state, row.last_error ?? '').to.equal('finished');
      expect(row.attempts, 'claimed once').to.equal(1);
      expect(result.output).to.equal(`${j.marker}\n`);
      expect(['proc-a', 'proc-b']).to.include(row.locked_by);
    }
    const intervals = (acct: string) =>
      rows.filter((r) => String(r.account_id) === acct).map((r) => [r.started_at!.getTime(), r.finished_at!.getTime()] as const);
    expect(maxOverlap(intervals(one)), 'limit-1 account').to.equal(1);
    expect(maxOverlap(intervals(two)), 'limit-2 account').to.be.at.most(2);

    // Each job's log line names it, and each job was finished by exactly one process. The
    // line is written after the commit the states were read from, so wait for all of them.
    const finishedLines = () => [...logLines(a), ...logLines(b)].filter((l) => l.msg === 'job finished');
    while (finishedLines().length < jobs.length && a.child.exitCode === null && b.child.exitCode === null) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const finishedBy = finishedLines().map((l) => l.submission);
    expect([...finishedBy].sort()).to.deep.equal(jobs.map((j) => j.id).sort());

    a.child.kill('SIGTERM');
    b.child.kill('SIGTERM');
    expect(await a.exited).to.equal(0);
    expect(await b.exited).to.equal(0);
    const stopped = await t.db.selectFrom('runners').select(['id', 'stopped_at']).orderBy('id').execute();
    expect(stopped.map((r) => r.id)).to.deep.equal(['proc-a', 'proc-b']);
    for (const r of stopped) expect(r.stopped_at).to.be.instanceOf(Date);
    await expectNoDrift(t.db);
  });

  it('a job whose runner dies is reaped by another runner and run again', async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const acct = await makeAccount(t.db);
    const id = await enqueue(t.db, acct, { code: 'import time\ntime.sleep(2)\nprint("survived")\n' });
    // The shortest lease, so the survivor reaps soon after the other stops heart-beating.
    const common = { RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: '1', RUNBOX_LEASE_SECONDS: '5' };
    const doomed = spawnCli('runner.js', { ...common, RUNBOX_RUNNER_ID: 'doomed', RUNBOX_SANDBOX_UID_BASE: '61200' });
    procs.push(doomed);
    await waitForLog(doomed, /job started/);
    // Frozen, not dead: it stops heart-beating at once (so its job cannot end there however
    // slow the host is), yet its process is alive, so the survivor's start-up finds nothing to
    // requeue and the job must come back through the lease.
    doomed.child.kill('SIGSTOP');
    const survivor = spawnCli('runner.js', { ...common, RUNBOX_RUNNER_ID: 'survivor', RUNBOX_SANDBOX_UID_BASE: '61300' });
    procs.push(survivor);
    await waitForLog(survivor, /runner started/);
    doomed.child.kill('SIGKILL');
    await doomed.exited;

    await waitForStates(t.db, [id], ['finished', 'failed']);
    const row = await t.db.selectFrom('submissions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).to.include({ state: 'finished', locked_by: 'survivor', attempts: 2, refunded: false });
    expect((row.result as RunResult).output).to.equal('survived\n');
    expect(logLines(survivor).some((l) => l.msg === 'reaped jobs of runners that stopped responding')).to.equal(true);
    survivor.child.kill('SIGTERM');
    expect(await survivor.exited).to.equal(0);
    await expectNoDrift(t.db);
  });

  it("a runner starting on a host requeues at once the jobs of an earlier runner there whose process is gone", async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const acct = await makeAccount(t.db, { running: 1 });
    const first = await enqueue(t.db, acct, { code: 'import time\ntime.sleep(2)\nprint("first")\n' });
    const second = await enqueue(t.db, acct, { code: 'print("second")\n' });
    // The default lease (60 s): without the check at start-up the account's only slot
    // would stay taken by the dead runner's job for that long.
    const common = { RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: '1', RUNBOX_LEASE_SECONDS: '60' };
    const crashed = spawnCli('runner.js', { ...common, RUNBOX_RUNNER_ID: 'crashed', RUNBOX_SANDBOX_UID_BASE: '63000' });
    procs.push(crashed);
    await waitForLog(crashed, /job started/);
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    const held = await t.db.selectFrom('submissions').select(['state', 'locked_by']).where('id', '=', first).executeTakeFirstOrThrow();
    expect(held).to.deep.equal({ state: 'running', locked_by: 'crashed' });

    const next = spawnCli('runner.js', { ...common, RUNBOX_RUNNER_ID: 'next', RUNBOX_SANDBOX_UID_BASE: '63100' });
    procs.push(next);
    const requeued = await waitForLog(next, /requeued the jobs of dead runners/);
    expect(requeued['runners']).to.deep.equal(['crashed']);
    expect((requeued['reaped'] as { requeued: string[] }).requeued).to.deep.equal([first]);
    // Done before the runner started claiming: the slot was free at once.
    await waitForLog(next, /runner started/);
    const dead = await t.db.selectFrom('runners').select('stopped_at').where('id', '=', 'crashed').executeTakeFirstOrThrow();
    expect(dead.stopped_at).to.be.instanceOf(Date);

    await waitForStates(t.db, [first, second], ['finished', 'failed']);
    const rows = await t.db.selectFrom('submissions').selectAll().where('id', 'in', [first, second]).execute();
    const one = rows.find((r) => r.id === first)!;
    expect(one).to.include({ state: 'finished', locked_by: 'next', attempts: 2, refunded: false });
    expect((one.result as RunResult).output).to.equal('first\n');
    expect((rows.find((r) => r.id === second)!.result as RunResult).output).to.equal('second\n');
    next.child.kill('SIGTERM');
    expect(await next.exited).to.equal(0);
    await expectNoDrift(t.db);
  });

  it('npm start runs the API and the runner in one process and stops on SIGTERM', async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const acct = await makeAccount(t.db);
    const id = await enqueue(t.db, acct, { code: 'print("from start")\n' });
    const p = spawnCli('start.js', {
      RUNBOX_DATABASE_URL: t.url,
      RUNBOX_COMPONENTS: 'api,runner',
      RUNBOX_PORT: '0',
      RUNBOX_RUNNER_ID: 'start-runner',
    });
    procs.push(p);
    const listening = await waitForLog(p, /^API listening on /);
    const url = listening.url as string;
    expect(url).to.match(/^http:\/\/127\.0\.0\.1:\d+$/);
    // The web portal's address, where a newcomer signs up (its own log line, which may
    // reach this process in a later read than the one before it).
    const portal = await waitForLog(p, /^web portal: open /);
    expect(portal.url).to.equal(url);
    const res = await fetch(`${url}/api/limits/`, { headers: { accept: 'application/json' } });
    expect(res.status).to.equal(200);
    const signup = await fetch(`${url}/signup`);
    expect(signup.status).to.equal(200);
    expect(await signup.text()).to.include('<h1>Sign up</h1>');
    await waitForStates(t.db, [id], ['finished']);
    const row = await t.db.selectFrom('submissions').select('result').where('id', '=', id).executeTakeFirstOrThrow();
    expect((row.result as RunResult).output).to.equal('from start\n');
    p.child.kill('SIGTERM');
    expect(await p.exited).to.equal(0);
    expect(logLines(p).some((l) => l.msg === 'runner stopped')).to.equal(true);
  });
});
