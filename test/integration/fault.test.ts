import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { createAccount, setAccountLimits } from '../../src/accounts/accounts.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { clientConfig } from '../../src/db/url.js';
import { heartbeat } from '../../src/queue/heartbeat.js';
import { claim, complete, reapExpired } from '../../src/queue/index.js';
import type { RunResult } from '../../src/result.js';
import { CallbackReceiver } from '../helpers/callback-receiver.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { apiUrlOf, logLines, Processes, sleep, until, waitForLine } from '../helpers/processes.js';
import { accountUsage, enqueue, expectNoDrift, makeAccount, waitForStates } from '../helpers/queue-rows.js';
import { skipUnlessRealRuns } from '../helpers/results-stack.js';
import { successResult } from '../helpers/run-result.js';

// Faults with real processes: a runner killed with SIGKILL mid-run, Postgres stopped
// under load, a callback receiver down for a (compressed) day, and 1,000 submissions
// through two API processes and two runners. Each is bounded; the whole file runs in
// well under three minutes on two cores.

const PG_BIN = '/usr/lib/postgresql/15/bin';

const procs = new Processes();

describe('faults', function () {
  this.timeout(180_000);
  afterEach(async function () {
    // What the processes said is the first thing to read when a fault test fails.
    if (this.currentTest?.state === 'failed') {
      console.log(procs.tails());
    }
    await procs.stopAll();
  });

  describe('a runner killed with SIGKILL in the middle of runs', () => {
    let t: TestDatabase;
    before(async () => {
      t = await freshDatabase('fault_kill');
    });
    after(async () => {
      await t?.drop();
    });

    it('every job is run again or failed and refunded; none lost, none counted twice', async function () {
      skipUnlessRealRuns(this, ['python3.9']);
      const account = await makeAccount(t.db, { running: 6 });
      const code = 'import time\ntime.sleep(3)\nprint("done")\n';
      // Three may start again, three have only the one attempt they were killed in.
      const retried = await Promise.all([0, 1, 2].map(() => enqueue(t.db, account, { code, maxAttempts: 3, billed: true })));
      const single = await Promise.all([0, 1, 2].map(() => enqueue(t.db, account, { code, maxAttempts: 1, billed: true })));
      const all = [...retried, ...single];
      expect(await accountUsage(t.db, account)).to.equal(6);

      // One account's six runs fill the runner: no slot kept for other accounts.
      const env = { RUNBOX_DATABASE_URL: t.url, RUNBOX_LEASE_SECONDS: '5', RUNBOX_RUNNER_SLOTS: '6', RUNBOX_RUNNER_RESERVED_SLOTS: '0' };
      const victim = procs.launch('runner-a', 'runner.js', { ...env, RUNBOX_RUNNER_ID: 'fault-a', RUNBOX_SANDBOX_UID_BASE: '61200' });
      await until('all six running', async () => {
        const rows = await t.db.selectFrom('submissions').select('id').where('state', '=', 'running').execute();
        return rows.length === 6;
      });
      await sleep(500); // inside their sandboxes
      victim.child.kill('SIGKILL');
      await victim.exited;

      procs.launch('runner-b', 'runner.js', { ...env, RUNBOX_RUNNER_ID: 'fault-b', RUNBOX_SANDBOX_UID_BASE: '61300' });
      await waitForStates(t.db, all, ['finished', 'failed']);

      const rows = await t.db.selectFrom('submissions').selectAll().where('id', 'in', all).execute();
      for (const id of retried) {
        const r = rows.find((x) => x.id === id)!;
        expect(r.state, r.last_error ?? '').to.equal('finished');
        expect(r.attempts).to.equal(2);
        expect(r.locked_by).to.equal('fault-b');
        expect(r.refunded).to.equal(false);
        expect((r.result as RunResult).output).to.equal('done\n');
      }
      for (const id of single) {
        const r = rows.find((x) => x.id === id)!;
        expect(r.state).to.equal('failed');
        expect(r.refunded).to.equal(true);
        expect(r.last_error).to.match(/lease expired/);
      }
      // Billed exactly for the three that produced a result.
      expect(await accountUsage(t.db, account)).to.equal(3);
      await expectNoDrift(t.db);
    });
  });

  describe('heart-beats after a lost outcome', () => {
    let t: TestDatabase;
    before(async () => {
      t = await freshDatabase('fault_heartbeat');
    });
    after(async () => {
      await t?.drop();
    });

    it('renew only the runs in progress, so a job whose outcome was not recorded is reaped', async () => {
      const account = await makeAccount(t.db);
      const dropped = await enqueue(t.db, account);
      const busy = await enqueue(t.db, account);
      const jobs = await claim(t.db, 'hb-runner', 2, 5);
      expect(jobs.map((j) => j.id).sort()).to.deep.equal([dropped, busy].sort());
      await sql`UPDATE submissions SET lease_expires_at = now() - interval '1 second'`.execute(t.db);
      const info = { id: 'hb-runner', hostname: 'h', slots: 2, launcher: 'bwrap' };
      const held = await heartbeat(t.db, info, 5, [`${busy}/1`]);
      expect(held.map((h) => h.id)).to.deep.equal([busy]);
      const reaped = await reapExpired(t.db);
      expect(reaped.requeued).to.deep.equal([dropped]);
      await expectNoDrift(t.db);
    });
  });

  describe('Postgres stopped under load', () => {
    let dir: string;
    let url: string;
    let handle: DbHandle | undefined;
    let receiver: CallbackReceiver;
    const port = 54000 + (process.pid % 1000);

    const pgCtl = (...args: string[]) =>
      execFileSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, 'pg_ctl'), '-D', join(dir, 'data'), ...args], { stdio: 'pipe', timeout: 60_000 });
    const startPg = () =>
      pgCtl('-l', join(dir, 'log'), '-w', '-o', `-k ${dir} -p ${port} -c listen_addresses='' -c fsync=off -c max_connections=100`, 'start');
    const stopPg = () => pgCtl('-m', 'fast', '-w', 'stop');

    before(async function () {
      if (process.getuid?.() !== 0) return;
      // A throwaway cluster: the machine's own cluster serves every other test.
      dir = mkdtempSync(join(tmpdir(), 'runbox-fault-pg-'));
      chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
      execFileSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, 'initdb'), '-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8'], { stdio: 'pipe' });
      startPg();
      const admin = new pg.Client({ host: dir, port, user: 'postgres', database: 'postgres' });
      await admin.connect();
      await admin.query('CREATE DATABASE runbox');
      await admin.end();
      url = `postgresql://postgres@${encodeURIComponent(dir)}:${port}/runbox`;
      expect(clientConfig(url).host).to.equal(dir);
      handle = connect(url, { max: 4 });
      await migrateToLatest(handle.db);
      receiver = new CallbackReceiver();
    });
    after(async () => {
      await handle?.close();
      await receiver?.close();
      if (dir) {
        try {
          stopPg();
        } catch {
          // already stopped
        }
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('the API answers 503 while it is down and recovers without a restart; runner and sender reconnect', async function () {
      skipUnlessRealRuns(this, ['python3.9']);
      const db = handle!.db;
      const hook = await receiver.start();
      const account = await createAccount(db, 'pgdown@example.test');
      await setAccountLimits(db, account.id, { perMinute: 100_000, pending: 100_000, monthlyLimit: 1_000_000 });
      const key = await createKey(db, { accountId: account.id, appName: 'load', redirectUrl: hook });

      const proc = procs.launch('runbox', 'start.js', {
        RUNBOX_DATABASE_URL: url,
        RUNBOX_PORT: '0',
        RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
        RUNBOX_CALLBACK_BACKOFF_MS: '200',
        RUNBOX_LEASE_SECONDS: '5',
        RUNBOX_RUNNER_SLOTS: '2',
        RUNBOX_RUNNER_ID: 'fault-pg',
        RUNBOX_SANDBOX_UID_BASE: '61400',
      });
      const api = String((await waitForLine(proc, (l) => typeof l['url'] === 'string'))['url']);

      // Load: a steady stream of runs, recording every answer.
      const answers: { status: number; id?: string }[] = [];
      let loading = true;
      const load = (async () => {
        while (loading) {
          try {
            const res = await fetch(`${api}/api/v2/run-code/`, {
              method: 'POST',
              headers: { Authorization: key.key, 'Content-Type': 'application/json' },
              body: JSON.stringify({ code: 'print("hi")', compiler: 'python-3.9.7', extra_params: { n: answers.length } }),
            });
            await res.text();
            answers.push({ status: res.status });
          } catch (err) {
            answers.push({ status: -1 });
          }
          await sleep(50);
        }
      })();

      await until('a few runs admitted', () => answers.filter((a) => a.status === 200).length >= 5);
      stopPg();
      const atStop = answers.length;
      const health = await fetch(`${api}/api/health`);
      expect(health.status).to.equal(503);
      expect(((await health.json()) as { database: { ok: boolean } }).database.ok).to.equal(false);
      await until('503s while the database is down', () => answers.slice(atStop).filter((a) => a.status === 503).length >= 5);
      startPg();
      await until('the API back to 200 without a restart', async () => (await fetch(`${api}/api/health`)).status === 200);
      const atStart = answers.length;
      await until('runs admitted again', () => answers.slice(atStart).filter((a) => a.status === 200).length >= 5);
      loading = false;
      await load;

      expect(proc.child.exitCode, 'the process kept running').to.equal(null);
      // Every answer is 200 or 503: no 500s, no dropped connections.
      expect([...new Set(answers.map((a) => a.status))].sort()).to.deep.equal([200, 503]);
      // Every admitted run ends, and its result reaches the receiver (runner and sender reconnected).
      const admitted = await db.selectFrom('submissions').select(['id']).execute();
      expect(admitted.length).to.equal(answers.filter((a) => a.status === 200).length);
      await waitForStates(
        db,
        admitted.map((s) => s.id),
        ['finished', 'failed'],
      );
      await until('every callback delivered', () => admitted.every((s) => receiver.okSubmissions.has(s.id)), 60_000);
      const states = await db.selectFrom('submissions').select(['state']).execute();
      expect(states.every((s) => s.state === 'finished')).to.equal(true);
      // The process logged its way through, in JSON, each run's lines carrying its submission id.
      expect(proc.lines.some((l) => /unreachable|lost its connection|failed/.test(l))).to.equal(true);
      const first = admitted[0]!.id;
      expect(logLines(proc).filter((l) => l['submission'] === first).map((l) => l['msg'])).to.include.members(['submission admitted', 'job started', 'job finished']);
    });
  });

  describe('a callback receiver down for a simulated day', () => {
    let t: TestDatabase;
    let receiver: CallbackReceiver;
    before(async () => {
      t = await freshDatabase('fault_callbacks');
      receiver = new CallbackReceiver();
    });
    after(async () => {
      await receiver?.close();
      await t?.drop();
    });

    it('nothing is lost: every delivery ends delivered or dead, each delivered once', async () => {
      const hook = await receiver.start();
      const account = await createAccount(t.db, 'day@example.test');
      const key: CreatedKey = await createKey(t.db, { accountId: account.id, appName: 'day', redirectUrl: hook });
      // 10 attempts, 10 ms doubling (±25%): the compressed form of the default 3 minutes
      // doubling over about a day.
      procs.launch('sender', 'start.js', {
        RUNBOX_DATABASE_URL: t.url,
        RUNBOX_COMPONENTS: 'sender',
        RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
        RUNBOX_CALLBACK_BACKOFF_MS: '10',
        RUNBOX_CALLBACK_MAX_ATTEMPTS: '10',
        RUNBOX_CALLBACK_TIMEOUT_MS: '1000',
      });
      // Each submission joins its group before its delivery exists.
      const finish = async (n: number, group: Set<string>) => {
        for (let i = 0; i < n; i++) {
          const id = await enqueue(t.db, account.id, { keyId: key.id });
          group.add(id);
          const [job] = await claim(t.db, 'fault-runner', 1, 60);
          expect(job!.id).to.equal(id);
          expect(await complete(t.db, 'fault-runner', id, successResult(id))).to.equal(true);
        }
      };
      // The receiver's outage is told by attempt, not by the clock, so a slow host cannot
      // move a delivery from one group to the other: the early submissions find it down
      // for all their attempts (dead), the late ones find it back at their 8th.
      const early = new Set<string>();
      const late = new Set<string>();
      receiver.downFor = (submission, n) => early.has(submission) || n <= 7;
      await finish(10, early);
      await finish(10, late);

      const pending = async () => (await t.db.selectFrom('callback_deliveries').select('id').where('state', '=', 'pending').execute()).length;
      await until('no delivery pending', async () => (await pending()) === 0, 60_000);
      const rows = await t.db.selectFrom('callback_deliveries').select(['id', 'submission_id', 'state', 'attempts']).execute();
      expect(rows.length, 'one delivery per ended submission').to.equal(20);
      for (const r of rows.filter((x) => early.has(x.submission_id))) {
        expect(r.state).to.equal('dead');
        expect(r.attempts).to.equal(10);
        expect(receiver.attemptsBySubmission.get(r.submission_id), 'requests received').to.equal(10);
      }
      for (const r of rows.filter((x) => late.has(x.submission_id))) {
        expect(r.state).to.equal('delivered');
        expect(r.attempts).to.equal(8);
        expect(receiver.okByDelivery.get(r.id), `delivery ${r.id} answered 2xx once`).to.equal(1);
      }
      expect(receiver.requests).to.equal(10 * 10 + 10 * 8);
    });
  });

  describe('1,000 submissions from 20 accounts through two API processes and two runners', () => {
    let t: TestDatabase;
    before(async () => {
      t = await freshDatabase('fault_thousand');
    });
    after(async () => {
      await t?.drop();
    });

    it('every one ends with a result and the usage counts match exactly', async function () {
      skipUnlessRealRuns(this, ['python3.9']);
      const keys: { account: string; key: CreatedKey }[] = [];
      for (let i = 0; i < 20; i++) {
        const account = await createAccount(t.db, `many${i}@example.test`);
        await setAccountLimits(t.db, account.id, { perMinute: 1000, pending: 1000 });
        keys.push({ account: account.id, key: await createKey(t.db, { accountId: account.id, appName: `app ${i}` }) });
      }
      const env = { RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: '2', RUNBOX_LOG_LEVEL: 'warn' };
      // Runners as the runner unit starts them, each with its admin listener for /metrics.
      const runnerEnv = { ...env, RUNBOX_COMPONENTS: 'runner', RUNBOX_LOG_LEVEL: 'info', RUNBOX_ADMIN_HOST: '127.0.0.1', RUNBOX_ADMIN_PORT: '0' };
      const runners = [
        procs.launch('runner-1', 'start.js', { ...runnerEnv, RUNBOX_RUNNER_ID: 'many-1', RUNBOX_SANDBOX_UID_BASE: '61500' }),
        procs.launch('runner-2', 'start.js', { ...runnerEnv, RUNBOX_RUNNER_ID: 'many-2', RUNBOX_SANDBOX_UID_BASE: '61600' }),
      ];
      const metricsUrls = await Promise.all(
        runners.map(async (p) => {
          const line = await waitForLine(p, (l) => typeof l['msg'] === 'string' && (l['msg'] as string).startsWith('metrics on'));
          return `http://127.0.0.1:${line['port'] as number}/metrics`;
        }),
      );
      const apis = [procs.launch('api-1', 'api.js', { ...env, RUNBOX_PORT: '0' }), procs.launch('api-2', 'api.js', { ...env, RUNBOX_PORT: '0' })];
      const urls = await Promise.all(apis.map((p) => apiUrlOf(p)));
      await until('both runners registered', async () => (await t.db.selectFrom('runners').select('id').execute()).length === 2);

      const total = 1000;
      let next = 0;
      const statuses: number[] = [];
      const worker = async () => {
        while (next < total) {
          const i = next++;
          const { key } = keys[i % 20]!;
          const res = await fetch(`${urls[i % 2]}/api/v2/run-code/`, {
            method: 'POST',
            headers: { Authorization: key.key, 'Content-Type': 'application/json' },
            body: JSON.stringify({ code: 'print("hello")', compiler: 'python-3.9.7', extra_params: { i } }),
          });
          await res.text();
          statuses.push(res.status);
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      expect(statuses.filter((s) => s === 200).length, `answers: ${[...new Set(statuses)].join(', ')}`).to.equal(total);

      const ids = (await t.db.selectFrom('submissions').select('id').execute()).map((r) => r.id);
      expect(ids.length).to.equal(total);
      await waitForStates(t.db, ids, ['finished', 'failed']);

      const { rows } = await sql<{ state: string; status: string; output: string; n: number }>`
        SELECT state, result->>'status' AS status, result->>'output' AS output, count(*)::int AS n
        FROM submissions GROUP BY 1, 2, 3
      `.execute(t.db);
      expect(rows).to.deep.equal([{ state: 'finished', status: 'success', output: 'hello\n', n: total }]);
      for (const { account, key } of keys) {
        const usage = await t.db.selectFrom('account_usage').select('submissions').where('account_id', '=', account).executeTakeFirstOrThrow();
        const keyUsage = await t.db.selectFrom('key_usage').select('submissions').where('key_id', '=', key.id).executeTakeFirstOrThrow();
        const own = await t.db.selectFrom('submissions').select(sql<number>`count(*)::int`.as('n')).where('account_id', '=', account).executeTakeFirstOrThrow();
        expect(usage.submissions).to.equal(total / 20);
        expect(keyUsage.submissions).to.equal(total / 20);
        expect(own.n).to.equal(total / 20);
      }
      const both = await t.db.selectFrom('submissions').select('locked_by').distinct().execute();
      expect(both.map((r) => r.locked_by).sort()).to.deep.equal(['many-1', 'many-2']);
      await expectNoDrift(t.db);
      for (const r of runners) expect(r.child.exitCode).to.equal(null);
      // Each runner counts its own runs; together they count every one.
      let runs = 0;
      let durations = 0;
      for (const url of metricsUrls) {
        const text = await (await fetch(url)).text();
        runs += Number(/^runbox_runs_total\{status="success",compiler="python-3.9.7"\} (\d+)$/m.exec(text)?.[1] ?? 0);
        durations += Number(/^runbox_run_duration_seconds_count\{compiler="python-3.9.7"\} (\d+)$/m.exec(text)?.[1] ?? 0);
        expect(text).to.match(/^runbox_sandbox_overhead_seconds_count\{compiler="python-3.9.7"\} [1-9]\d*$/m);
      }
      expect(runs).to.equal(total);
      expect(durations).to.equal(total);
    });
  });
});
