import { join } from 'node:path';
import { expect } from 'chai';
import { execa } from 'execa';
import { sql } from 'kysely';
import { createKey } from '../../src/accounts/keys.js';
import { migrations } from '../../src/db/migrations/index.js';
import type { RunResult } from '../../src/result.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { type CliProcess, spawnCli } from '../helpers/cli-process.js';
import { waitForLog } from '../helpers/processes.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { buildPreviousRelease, previousReleaseCommit, type PreviousRelease } from '../helpers/previous-release.js';
import { expectNoDrift } from '../helpers/queue-rows.js';
import { skipUnlessRealRuns } from '../helpers/results-stack.js';

// A rolling upgrade from the previous release (the code just before the newest schema
// change, built from this repository's history), with whole processes and runs going all
// along, in the order docs/operating.md gives:
//   1. the previous release's API and runner serve;
//   2. the new release migrates the database (runbox-admin migrate) while they serve:
//      expand-only migrations, so their statements keep working;
//   3. a new runner starts, the old one is stopped (SIGTERM: it drains);
//   4. a new API starts, the balancer sends to it, the old one is stopped (it drains).
// A client sends runs the whole time, to the API the balancer would pick (a refused
// connection is retried on the next, as a balancer does); every run must succeed once.

interface Sent {
  n: number;
  status: number;
  output: string | undefined;
  submission: string | undefined;
  retries: number;
}

describe('upgrading from the previous release while it serves', function () {
  this.timeout(900_000);
  let prev: PreviousRelease;
  let t: TestDatabase;
  const procs: CliProcess[] = [];

  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const found = await previousReleaseCommit();
    if ('missing' in found) {
      console.log(`      SKIPPED: ${found.missing}`);
      return this.skip();
    }
    prev = await buildPreviousRelease(found.commit, (line) => console.log(`      ${line}`));
    const newer = Object.keys(migrations).filter((m) => !prev.migrations.includes(m));
    console.log(`      previous release ${prev.commit.slice(0, 12)}; migrations of this release: ${newer.join(', ') || 'none'}`);
    t = await freshDatabase('upgrade', { upTo: prev.migrations.at(-1)! });
  });
  after(async () => {
    for (const p of procs.splice(0)) {
      if (p.child.exitCode === null) p.child.kill('SIGKILL');
      await p.exited;
    }
    await t?.drop();
  });

  const start = (root: string, components: string, env: Record<string, string> = {}) => {
    const p = spawnCli('start.js', { RUNBOX_DATABASE_URL: t.url, RUNBOX_COMPONENTS: components, RUNBOX_PORT: '0', RUNBOX_POLL_MS: '200', ...env }, [], root);
    procs.push(p);
    return p;
  };
  const stop = async (p: CliProcess) => {
    p.child.kill('SIGTERM');
    return p.exited;
  };

  it('runs every run once, through the migration, the new runner and the new API', async () => {
    // 1. The previous release serves (its start-up makes the Free plan).
    const oldApi = start(prev.dir, 'api');
    let target = (await waitForLog(oldApi, /^API listening on /)).url as string;
    // One account fills the runners here: no slot kept for other accounts (a release without the share ignores the variable).
    const oldRunner = start(prev.dir, 'runner', { RUNBOX_RUNNER_ID: 'old-runner', RUNBOX_RUNNER_SLOTS: '2', RUNBOX_SANDBOX_UID_BASE: '64400', RUNBOX_RUNNER_RESERVED_SLOTS: '0' });
    await waitForLog(oldRunner, /runner started/);
    // Written as rows of the previous release's schema: this release's account code reads
    // columns its migrations add.
    const { rows: made } = await sql<{ id: string }>`
      INSERT INTO accounts (email, plan, per_minute, running, pending) VALUES (${`upgrade-${process.pid}@example.com`}, 'free', 10000, 4, 20) RETURNING id::text
    `.execute(t.db);
    const account = { id: made[0]!.id };
    const { key } = await createKey(t.db, { accountId: account.id, appName: 'upgrade', redirectUrl: null, monthlyLimit: null });

    // Two clients, each sending a synchronous run after another to the balancer's choice.
    const sent: Sent[] = [];
    let n = 0;
    let sending = true;
    const client = async () => {
      while (sending) {
        const mine = ++n;
        let retries = 0;
        for (;;) {
          try {
            const res = await fetch(`${target}/api/v2/run-code-sync/`, {
              method: 'POST',
              headers: { Authorization: key, 'Content-Type': 'application/json' },
              body: JSON.stringify({ compiler: 'python-3.9.7', code: `print(${mine} * 2)\n` }),
            });
            const body = (await res.json()) as RunResult & { error?: unknown };
            sent.push({ n: mine, status: res.status, output: body.output, submission: body.id, retries });
            // A client's pace, not a benchmark's: the host is shared.
            await new Promise((r) => setTimeout(r, 100));
            break;
          } catch {
            // A refused or closed connection: the balancer sends it to the next host.
            retries++;
            await new Promise((r) => setTimeout(r, 100));
          }
        }
      }
    };
    const clients = [client(), client()];
    const moreRuns = async (count: number) => {
      const goal = sent.length + count;
      while (sent.length < goal) await new Promise((r) => setTimeout(r, 50));
    };
    await moreRuns(4);

    // 2. The new release migrates the database while the old one serves.
    const migrated = await execa(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), 'migrate'], {
      env: { RUNBOX_ENV_FILE: '', RUNBOX_DATABASE_URL: t.url },
      reject: false,
    });
    expect(migrated.exitCode, migrated.stderr).to.equal(0);
    const outcome = JSON.parse(migrated.stdout) as { applied: string[]; indexes: string[] };
    expect(outcome.applied).to.deep.equal(Object.keys(migrations).filter((m) => !prev.migrations.includes(m)));
    const afterMigration = sent.length;
    await moreRuns(4);
    // And a purge runs meanwhile (nothing is old enough to go: it only must not get in the way).
    const purge = await execa(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), 'submissions', 'purge', '--days', '1'], {
      env: { RUNBOX_ENV_FILE: '', RUNBOX_DATABASE_URL: t.url },
      reject: false,
    });
    expect(purge.exitCode, purge.stderr).to.equal(0);
    await moreRuns(2);

    // An old process that restarts now: whether it can depends on the release (docs/operating.md).
    const restarted = start(prev.dir, 'api');
    if (prev.toleratesNewerSchema) {
      await waitForLog(restarted, /^API listening on /);
      expect(await stop(restarted)).to.equal(0);
    } else {
      expect(await restarted.exited).to.equal(1);
      expect(restarted.lines.join('\n')).to.include('corrupted migrations: previously executed migration');
      console.log('      the previous release refuses to start once the new one has migrated: its processes must not restart until replaced');
    }

    // 3. A new runner, then the old one drains and exits.
    // The test's one account keeps both slots busy, as on the previous release's runner (no slot kept for other accounts).
    const newRunner = start(PROJECT_ROOT, 'runner', { RUNBOX_RUNNER_ID: 'new-runner', RUNBOX_RUNNER_SLOTS: '2', RUNBOX_SANDBOX_UID_BASE: '64500', RUNBOX_RUNNER_RESERVED_SLOTS: '0' });
    await waitForLog(newRunner, /runner started/);
    expect(await stop(oldRunner)).to.equal(0);
    const afterOldRunner = sent.length;
    await moreRuns(4);

    // 4. A new API; the balancer sends to it; the old one drains and exits.
    const newApi = start(PROJECT_ROOT, 'api');
    target = (await waitForLog(newApi, /^API listening on /)).url as string;
    expect(await stop(oldApi)).to.equal(0);
    const afterOldApi = sent.length;
    await moreRuns(4);
    sending = false;
    await Promise.all(clients);

    // Every run succeeded, exactly once, whichever processes took it.
    const failures = sent.filter((s) => s.status !== 200 || s.output !== `${s.n * 2}\n`);
    expect(failures, JSON.stringify(failures)).to.deep.equal([]);
    expect(new Set(sent.map((s) => s.n)).size).to.equal(sent.length);
    const rows = await t.db.selectFrom('submissions').select(['id', 'state', 'attempts', 'refunded', 'locked_by']).where('account_id', '=', account.id).execute();
    expect(rows).to.have.length(sent.length);
    for (const r of rows) expect(r).to.include({ state: 'finished', attempts: 1, refunded: false });
    const by = (i: number) => rows.find((r) => r.id === sent[i]!.submission)!.locked_by;
    expect(sent.slice(0, afterMigration).map((_, i) => by(i))).to.satisfy((l: string[]) => l.every((x) => x === 'old-runner'));
    expect(sent.slice(afterOldRunner + 2).map((_, i) => by(afterOldRunner + 2 + i))).to.satisfy((l: string[]) => l.every((x) => x === 'new-runner'));
    const usage = await t.db.selectFrom('account_usage').select('submissions').where('account_id', '=', account.id).executeTakeFirstOrThrow();
    expect(usage.submissions).to.equal(sent.length);
    await expectNoDrift(t.db);
    console.log(
      `      ${sent.length} runs, none failed: ${afterMigration} before the migration, ${afterOldRunner - afterMigration} until the old runner stopped, ` +
        `${afterOldApi - afterOldRunner} until the old API stopped, ${sent.length - afterOldApi} after; ${sent.reduce((s, x) => s + x.retries, 0)} retried on a refused connection`,
    );

    expect(await stop(newRunner)).to.equal(0);
    expect(await stop(newApi)).to.equal(0);
  });
});
