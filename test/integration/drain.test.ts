import { expect } from 'chai';
import { sql } from 'kysely';
import { createKey } from '../../src/accounts/keys.js';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { RunResult } from '../../src/result.js';
import { pino } from 'pino';
import { startRunner } from '../../src/runner/daemon.js';
import { Processes, waitForLog } from '../helpers/processes.js';
import { successResult } from '../helpers/run-result.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { accountUsage, enqueue, expectNoDrift, makeAccount, stateOf, waitForStates } from '../helpers/queue-rows.js';
import { skipUnlessRealRuns } from '../helpers/results-stack.js';
import { WsClient } from '../helpers/ws-client.js';

// Stopping for an upgrade, with whole processes as deployed (SIGTERM, as systemd sends):
// a runner stops claiming, lets the runs it started finish, hands back what it cannot
// finish within RUNBOX_DRAIN_SECONDS and exits 0; an API stops accepting connections,
// finishes the requests in flight (a synchronous run included), closes WebSockets with
// 1012 once their runs have ended, and exits 0. Each stop's time is printed.

const base = loadConfig();

const sleepy = (seconds: number, marker: string) => `import time\ntime.sleep(${seconds})\nprint(${JSON.stringify(marker)})\n`;

describe('draining on SIGTERM', function () {
  this.timeout(120_000);
  let t: TestDatabase;
  const procs = new Processes();

  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    t = await freshDatabase('drain');
  });
  afterEach(() => procs.stopAll());
  after(async () => {
    await t?.drop();
  });

  const runner = (id: string, uidBase: number, env: Record<string, string> = {}) => {
    // One account's runs fill each runner here: no slot kept for other accounts.
    return procs.launch(id, 'runner.js', { RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_ID: id, RUNBOX_SANDBOX_UID_BASE: String(uidBase), RUNBOX_RUNNER_RESERVED_SLOTS: '0', ...env });
  };

  it('a runner finishes the runs it started, claims nothing more, and exits 0; the next runner takes the rest', async () => {
    const acct = await makeAccount(t.db, { running: 3 });
    const a = await enqueue(t.db, acct, { code: sleepy(2, 'a'), billed: true });
    const b = await enqueue(t.db, acct, { code: sleepy(2, 'b'), billed: true });
    const r = runner('drain-a', 64000, { RUNBOX_RUNNER_SLOTS: '2' });
    await waitForLog(r, /runner started/);
    await waitForStates(t.db, [a, b], ['running']);
    // Queued after both slots were busy: only a runner that still claims would take it.
    const c = await enqueue(t.db, acct, { code: 'print("c")\n', billed: true });

    const t0 = performance.now();
    r.child.kill('SIGTERM');
    expect(await r.exited).to.equal(0);
    const stopMs = performance.now() - t0;
    const draining = await waitForLog(r, /^draining/);
    expect(draining.running).to.equal(2);
    const drained = await waitForLog(r, /^drained$/);
    expect(drained.handed_back).to.equal(false);
    console.log(`      runner drained 2 runs in ${drained.ms} ms; SIGTERM to exit ${Math.round(stopMs)} ms`);

    for (const [id, marker] of [[a, 'a'], [b, 'b']] as const) {
      const row = await stateOf(t.db, id);
      expect(row, row.last_error ?? '').to.include({ state: 'finished', attempts: 1, locked_by: 'drain-a', refunded: false });
      expect((row.result as RunResult).output).to.equal(`${marker}\n`);
    }
    expect(await stateOf(t.db, c)).to.include({ state: 'queued', attempts: 0, locked_by: null });
    const stopped = await t.db.selectFrom('runners').select('stopped_at').where('id', '=', 'drain-a').executeTakeFirstOrThrow();
    expect(stopped.stopped_at).to.be.instanceOf(Date);

    const next = runner('drain-b', 64100, { RUNBOX_RUNNER_SLOTS: '1' });
    await waitForStates(t.db, [c], ['finished']);
    expect(await stateOf(t.db, c)).to.include({ locked_by: 'drain-b', attempts: 1 });
    next.child.kill('SIGTERM');
    expect(await next.exited).to.equal(0);
    expect(await accountUsage(t.db, acct)).to.equal(3);
    await expectNoDrift(t.db);
  });

  it('a runner hands back a run that outlasts RUNBOX_DRAIN_SECONDS, unbilled twice, and still exits 0', async () => {
    const acct = await makeAccount(t.db);
    const long = await enqueue(t.db, acct, { code: sleepy(30, 'long'), billed: true });
    const r = runner('drain-c', 64200, { RUNBOX_RUNNER_SLOTS: '1', RUNBOX_DRAIN_SECONDS: '1' });
    await waitForStates(t.db, [long], ['running']);
    const t0 = performance.now();
    r.child.kill('SIGTERM');
    expect(await r.exited).to.equal(0);
    const stopMs = performance.now() - t0;
    const drained = await waitForLog(r, /^drained$/);
    expect(drained.handed_back).to.equal(true);
    console.log(`      runner handed back a 30 s run after its 1 s bound: SIGTERM to exit ${Math.round(stopMs)} ms`);
    expect(stopMs).to.be.below(25_000);
    // Back in the queue as if never started: its attempt is not spent, nothing is billed again.
    expect(await stateOf(t.db, long)).to.include({ state: 'queued', attempts: 0, locked_by: null, refunded: false });
    expect(await accountUsage(t.db, acct)).to.equal(1);
    await expectNoDrift(t.db);
    await t.db.deleteFrom('submissions').where('id', '=', long).execute();
    await t.db.updateTable('account_usage').set({ submissions: 0 }).where('account_id', '=', acct).execute();
  });

  it('a runner hands back, unstarted, a job its claim took as the stop began', async () => {
    const acct = await makeAccount(t.db);
    const started: string[] = [];
    const r = await startRunner({
      db: t.db,
      config: { ...base, RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: 1, RUNBOX_RUNNER_ID: 'drain-claim', RUNBOX_POLL_MS: 100 },
      sandbox: { launcher: 'none', run: () => Promise.reject(new Error('no sandbox here')) },
      log: pino({ level: 'silent' }),
      execute: async (job) => {
        started.push(job.id);
        return successResult(job.id);
      },
    });
    // The account row held (not against the job's insert): the runner's claim waits on it.
    const holder = await t.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [acct]);
      const id = await enqueue(t.db, acct);
      // (Polled on another connection: inside the holder's transaction the activity view is a snapshot.)
      for (;;) {
        const { rows } = await sql<{ n: number }>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'
        `.execute(t.db);
        if (rows[0]!.n > 0) break;
        await new Promise((res) => setTimeout(res, 20));
      }
      const stopping = r.stop();
      await holder.query('COMMIT');
      await stopping;
      expect(started).to.deep.equal([]);
      expect(await stateOf(t.db, id)).to.include({ state: 'queued', attempts: 0, locked_by: null });
      await expectNoDrift(t.db);
      await t.db.deleteFrom('submissions').where('id', '=', id).execute();
    } finally {
      holder.release();
    }
  });

  it('an API stops accepting, finishes a synchronous run and WebSocket runs, closes WebSockets with 1012, and exits 0', async () => {
    const account = await createAccount(t.db, `drain-${process.pid}@example.com`);
    const { key } = await createKey(t.db, { accountId: account.id, appName: 'drain', redirectUrl: null, monthlyLimit: null });
    const r = runner('drain-d', 64300, { RUNBOX_RUNNER_SLOTS: '3' });
    await waitForLog(r, /runner started/);
    const api = procs.launch('api', 'start.js', { RUNBOX_DATABASE_URL: t.url, RUNBOX_COMPONENTS: 'api', RUNBOX_PORT: '0' });
    const url = (await waitForLog(api, /^API listening on /)).url as string;
    const wsUrl = `${url.replace(/^http/, 'ws')}/api/v2/ws/`;

    const idle = await WsClient.open(wsUrl, { Authorization: key });
    const busy = await WsClient.open(wsUrl, { Authorization: key });
    busy.send({ type: 'run', id: 'ws-run', compiler: 'python-3.9.7', code: sleepy(2, 'from the websocket') });
    const sync = fetch(`${url}/api/v2/run-code-sync/`, {
      method: 'POST',
      headers: { Authorization: key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ compiler: 'python-3.9.7', code: sleepy(2, 'from sync') }),
    });
    // Both runs in a sandbox before the stop.
    for (;;) {
      const running = await t.db.selectFrom('submissions').select('id').where('account_id', '=', account.id).where('state', '=', 'running').execute();
      if (running.length === 2) break;
      await new Promise((res) => setTimeout(res, 50));
    }

    // Piston's WebSocket, before its init: closed the same way.
    const piston = await WsClient.open(`${url.replace(/^http/, 'ws')}/piston/api/v2/connect`, { Authorization: key });
    const t0 = performance.now();
    api.child.kill('SIGTERM');
    // The idle connection goes at once, with the retryable code.
    expect(await idle.untilClosed()).to.deep.equal({ code: 1012, reason: 'service restart' });
    expect(await piston.untilClosed()).to.deep.equal({ code: 1012, reason: 'service restart' });
    const idleMs = performance.now() - t0;
    // New connections are refused.
    let refused: unknown;
    await fetch(`${url}/api/limits/`).catch((err: unknown) => (refused = err));
    expect(String((refused as { cause?: { code?: string } })?.cause?.code)).to.equal('ECONNREFUSED');
    // A run sent on a connection that is closing is refused: the client sends it again elsewhere.
    busy.send({ type: 'run', id: 'too-late', compiler: 'python-3.9.7', code: 'print(1)\n' });
    const late = await busy.until((m) => m.type === 'error' && m.id === 'too-late');
    expect(late).to.include({ code: 'unavailable', message: 'this server is restarting: reconnect and send the run again' });

    // The runs in flight end normally.
    const answer = await sync;
    expect(answer.status).to.equal(200);
    expect(answer.headers.get('connection')).to.equal('close');
    expect(((await answer.json()) as RunResult).output).to.equal('from sync\n');
    const result = await busy.until((m) => m.type === 'result' && m.id === 'ws-run');
    expect(result.output).to.equal('from the websocket\n');
    expect(await busy.untilClosed()).to.deep.equal({ code: 1012, reason: 'service restart' });

    expect(await api.exited).to.equal(0);
    const stopMs = performance.now() - t0;
    const stopped = await waitForLog(api, /^API stopped$/);
    expect(stopped.drained).to.equal(true);
    console.log(`      API: idle WebSocket closed ${Math.round(idleMs)} ms after SIGTERM; drained a sync and a WebSocket run in ${stopped.ms} ms; exit ${Math.round(stopMs)} ms`);
    const rows = await t.db.selectFrom('submissions').select(['state', 'cancelled_at']).where('account_id', '=', account.id).execute();
    expect(rows).to.have.length(2);
    for (const row of rows) expect(row).to.deep.equal({ state: 'finished', cancelled_at: null });

    r.child.kill('SIGTERM');
    expect(await r.exited).to.equal(0);
  });
});
