import { expect } from 'chai';
import { sql } from 'kysely';
import { createAccount, setAccountLimits } from '../../src/accounts/accounts.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { RUNNER_POOL } from '../../src/db/connections.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { LISTEN_APPLICATION_NAME } from '../../src/queue/listen.js';
import { claim, complete } from '../../src/queue/index.js';
import type { RunResult } from '../../src/result.js';
import { CallbackReceiver } from '../helpers/callback-receiver.js';
import { createCluster, serverBinaries, type Cluster } from '../helpers/pg-cluster.js';
import { pgbouncerMissing, startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { apiUrlOf, logLines, Processes, sleep, until, waitForLine } from '../helpers/processes.js';
import { enqueue, expectNoDrift, makeAccount, waitForStates } from '../helpers/queue-rows.js';
import { skipUnlessRealRuns } from '../helpers/results-stack.js';
import { successResult } from '../helpers/run-result.js';
import { WsClient } from '../helpers/ws-client.js';

// runbox through PgBouncer in transaction pooling mode (Debian's pgbouncer, started here
// with its own configuration in front of a cluster of this test's own): migrations,
// admission, the queue and real runs, with LISTEN on a direct connection and without
// one (polling); and how many connections each process holds.

const PY = 'python-3.9.7';
/** Server connections PgBouncer may open: fewer than the processes' pools together. */
const SERVER_POOL = 3;

describe('through PgBouncer in transaction pooling mode', function () {
  this.timeout(120_000);
  let cluster: Cluster | undefined;
  let bouncer: PgBouncer | undefined;
  let direct: DbHandle;
  let why: string | undefined;
  const procs = new Processes();

  before(async function () {
    why = pgbouncerMissing() ?? (serverBinaries() ? undefined : 'no PostgreSQL server binaries under /usr/lib/postgresql');
    if (why) return;
    cluster = await createCluster({ listen: '127.0.0.1', settings: { fsync: 'off' } });
    await cluster.query('CREATE DATABASE runbox');
    bouncer = await startPgBouncer({ host: '127.0.0.1', port: cluster.port, poolMode: 'transaction', poolSize: SERVER_POOL });
    // Migrations too go through it, as each unit runs them at start.
    const through = connect(bouncer.url('runbox'), { max: 2, namedStatements: false });
    try {
      await migrateToLatest(through.db);
    } finally {
      await through.close();
    }
    direct = connect(cluster.url('runbox'), { max: 4, applicationName: 'runbox-test' });
  });
  beforeEach(function () {
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      console.log(procs.tails());
      if (bouncer) console.log(`      --- pgbouncer\n${bouncer.log().split('\n').slice(-20).join('\n')}`);
    }
    await procs.stopAll();
  });
  after(async () => {
    await direct?.close();
    await bouncer?.stop();
    cluster?.remove();
  });

  /** Backends of the cluster's runbox database, by application name (PgBouncer's server connections among them). */
  async function backends(db = direct.db, name = 'runbox'): Promise<Map<string, number>> {
    const { rows } = await sql<{ app: string; n: number }>`
      SELECT application_name AS app, count(*)::int AS n FROM pg_stat_activity
       WHERE datname = ${name} AND backend_type = 'client backend' AND application_name <> 'runbox-test'
       GROUP BY 1
    `.execute(db);
    return new Map(rows.map((r) => [r.app, r.n]));
  }

  it('named prepared statements collide across its server connections; runbox names none there', async () => {
    const account = await makeAccount(direct.db, { running: 100 });
    const named = connect(bouncer!.url('runbox'), { max: 8, namedStatements: true });
    const unnamed = connect(bouncer!.url('runbox'), { max: 8, namedStatements: false });
    try {
      const errors = async (db: DbHandle['db']) => {
        const messages = new Set<string>();
        await Promise.all(
          Array.from({ length: 40 }, () =>
            claim(db, 'bouncer-probe', 1, 60).catch((err: Error) => {
              messages.add(err.message);
              return [];
            }),
          ),
        );
        return [...messages];
      };
      // Why the setting exists: the claim's statement, named, breaks through PgBouncer.
      expect((await errors(named.db)).join('; ')).to.match(/prepared statement .* (already exists|does not exist)/);
      expect(await errors(unnamed.db)).to.deep.equal([]);
      // And the queue works through it unnamed: every job claimed once, completed once.
      const ids = await Promise.all(Array.from({ length: 30 }, () => enqueue(direct.db, account)));
      const claimed = (
        await Promise.all(Array.from({ length: 10 }, (_, i) => claim(unnamed.db, `r${i}`, 3, 60).then((jobs) => jobs.map((job) => ({ runner: `r${i}`, job })))))
      ).flat();
      expect(claimed.map((c) => c.job.id).sort()).to.deep.equal([...ids].sort());
      const done = await Promise.all(claimed.map((c) => complete(unnamed.db, c.runner, { id: c.job.id, attempt: c.job.attempts }, successResult(c.job.id))));
      expect(done).to.deep.equal(claimed.map(() => true));
      await expectNoDrift(direct.db);
    } finally {
      await named.close();
      await unnamed.close();
      await sql`DELETE FROM submissions`.execute(direct.db);
      await sql`UPDATE accounts SET running_now = 0`.execute(direct.db);
    }
  });

  for (const listening of [false, true]) {
    it(
      listening
        ? 'with LISTEN on a direct connection: runs of every kind end, each process LISTENs on one connection'
        : 'with no direct connection (polling): runs of every kind end, callbacks once each, usage exact',
      async function () {
        skipUnlessRealRuns(this, ['python3.9']);
        const receiver = new CallbackReceiver();
        const hook = await receiver.start();
        try {
          const db = direct.db;
          const account = await createAccount(db, `bouncer-${listening}@example.test`);
          await setAccountLimits(db, account.id, { perMinute: 1000, pending: 1000, running: 4 });
          const key: CreatedKey = await createKey(db, { accountId: account.id, appName: 'bouncer', redirectUrl: hook });
          const env = {
            RUNBOX_DATABASE_URL: bouncer!.url('runbox'),
            RUNBOX_DATABASE_POOLING: 'transaction',
            RUNBOX_DATABASE_LISTEN_URL: listening ? cluster!.url('runbox') : '',
            RUNBOX_POLL_MS: '300',
            RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
          };
          const api = procs.launch('api+sender', 'start.js', { ...env, RUNBOX_COMPONENTS: 'api,sender', RUNBOX_PORT: '0' });
          procs.launch('runner', 'runner.js', { ...env, RUNBOX_RUNNER_SLOTS: '3', RUNBOX_RUNNER_ID: `bouncer-${listening}` });
          const url = await apiUrlOf(api);
          await until('the runner registered', async () => (await db.selectFrom('runners').select('id').where('id', '=', `bouncer-${listening}`).execute()).length === 1);

          const post = (path: string, body: unknown) =>
            fetch(`${url}${path}`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
          // Asynchronous runs (callbacks), then synchronous runs and a WebSocket run with live
          // output (refused while every runner slot is taken, as they wait for their run).
          const ids = await Promise.all(
            Array.from({ length: 8 }, async (_, i) => {
              const res = await post('/api/v2/run-code/', { code: `print(${i} * 2)`, compiler: PY });
              expect(res.status).to.equal(200);
              return String(res.headers.get('x-submission-id'));
            }),
          );
          await waitForStates(db, ids, ['finished', 'failed']);
          const sync: RunResult[] = [];
          for (let i = 0; i < 4; i++) {
            const res = await post('/api/v2/run-code-sync/', { code: `print(input() + "${i}")`, input: 'sync', compiler: PY });
            expect(res.status).to.equal(200);
            sync.push((await res.json()) as RunResult);
          }
          const ws = await WsClient.open(`${url.replace('http', 'ws')}/api/v2/ws/`, { Authorization: key.key });
          ws.send({ type: 'run', id: 'live', code: 'import time\nfor i in range(3):\n    print(i, flush=True)\n    time.sleep(0.2)\n', compiler: PY });
          const wsResult = await ws.until((m) => m.type === 'result' && m.id === 'live');
          ws.close();

          expect(sync.map((r) => r.output).sort()).to.deep.equal(['sync0\n', 'sync1\n', 'sync2\n', 'sync3\n']);
          expect(wsResult).to.include({ status: 'success', output: '0\n1\n2\n' });
          // The output arrived live, before the result, in order.
          expect(ws.stdout('live')).to.equal('0\n1\n2\n');
          const rows = await db.selectFrom('submissions').select(['id', 'state', 'result']).where('id', 'in', ids).execute();
          expect(rows.map((r) => [r.state, (r.result as RunResult).output]).sort()).to.deep.equal(
            Array.from({ length: 8 }, (_, i) => ['finished', `${i * 2}\n`]).sort(),
          );
          await until('every callback delivered', () => ids.every((id) => receiver.attemptsBySubmission.get(id) === 1), 30_000);
          await sleep(500);
          expect(ids.map((id) => receiver.attemptsBySubmission.get(id))).to.deep.equal(ids.map(() => 1));
          const usage = await db.selectFrom('account_usage').select('submissions').where('account_id', '=', account.id).executeTakeFirstOrThrow();
          expect(usage.submissions).to.equal(8 + 4 + 1);
          await expectNoDrift(db);

          // Connections: PgBouncer's server connections stay within its pool; LISTEN goes direct, one per process, or nowhere.
          const now = await backends();
          const listeners = now.get(LISTEN_APPLICATION_NAME) ?? 0;
          const rest = [...now.entries()].filter(([app]) => app !== LISTEN_APPLICATION_NAME).reduce((n, [, c]) => n + c, 0);
          expect(rest, JSON.stringify([...now])).to.be.at.most(SERVER_POOL);
          expect(listeners).to.equal(listening ? 2 : 0);
          const all = procs.all.flatMap((p) => logLines(p));
          expect(all.filter((l) => /prepared statement/.test(JSON.stringify(l))), 'no prepared statement errors').to.deep.equal([]);
          for (const p of procs.all) expect(p.child.exitCode, p.name).to.equal(null);
        } finally {
          await receiver.close();
        }
      },
    );
  }

  it(`a runner holds ${RUNNER_POOL} pool connections and one LISTEN connection, whatever its slots`, async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    // A database of its own, reached directly: PgBouncer's server connections to the other one carry its clients' names.
    await cluster!.query('CREATE DATABASE runners');
    const own = connect(cluster!.url('runners'), { max: 2, applicationName: 'runbox-test' });
    await migrateToLatest(own.db);
    const db = own.db;
    const account = await makeAccount(db, { running: 16 });
    const ids = await Promise.all(Array.from({ length: 32 }, () => enqueue(db, account, { code: 'import time\ntime.sleep(0.3)\nprint(1)\n' })));
    // As the runner unit starts it, with its admin listener for /metrics.
    const runner = procs.launch('runner-16', 'start.js', {
      RUNBOX_DATABASE_URL: cluster!.url('runners'),
      RUNBOX_COMPONENTS: 'runner',
      RUNBOX_RUNNER_SLOTS: '16',
      RUNBOX_RUNNER_ID: 'sixteen',
      RUNBOX_ADMIN_HOST: '127.0.0.1',
      RUNBOX_ADMIN_PORT: '0',
    });
    const metricsAt = `http://127.0.0.1:${(await waitForLine(runner, (l) => String(l['msg']).startsWith('metrics on')))['port'] as number}/metrics`;
    const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
    await waitForLine(runner, (l) => l['msg'] === 'runner started');
    // While half the jobs wait: the deployment-wide gauges an autoscaler reads.
    await until('slots full', async () => {
      const text = await (await fetch(metricsAt)).text();
      return metric(text, 'runbox_queue_oldest_seconds') > 0 && metric(text, 'runbox_runners_live') === 1 && metric(text, 'runbox_runner_slots_live') === 16;
    }, 20_000);
    let most = 0;
    let listeners = 0;
    let running = 0;
    const watch = (async () => {
      for (;;) {
        const now = await backends(db, 'runners');
        most = Math.max(most, now.get('runbox') ?? 0);
        listeners = Math.max(listeners, now.get(LISTEN_APPLICATION_NAME) ?? 0);
        const r = await db.selectFrom('submissions').select(sql<number>`count(*)::int`.as('n')).where('state', '=', 'running').executeTakeFirstOrThrow();
        running = Math.max(running, r.n);
        const left = await db.selectFrom('submissions').select(sql<number>`count(*)::int`.as('n')).where('state', 'in', ['queued', 'running']).executeTakeFirstOrThrow();
        if (left.n === 0) return;
        await sleep(20);
      }
    })();
    await waitForStates(db, ids, ['finished', 'failed']);
    await watch;
    const states = await db.selectFrom('submissions').select('state').where('id', 'in', ids).execute();
    expect(states.every((s) => s.state === 'finished')).to.equal(true);
    // Many slots busy at once, on a few connections.
    expect(running).to.be.at.least(8);
    await own.close();
    expect(most).to.be.within(1, RUNNER_POOL);
    expect(listeners).to.equal(1);
    // Each job's wait in the queue and each claim's round trip, counted by the runner.
    const text = await (await fetch(metricsAt)).text();
    expect(metric(text, 'runbox_queue_wait_seconds_count')).to.equal(32);
    expect(metric(text, 'runbox_claim_seconds_count')).to.be.at.least(16);
    expect(metric(text, 'runbox_queue_oldest_seconds')).to.equal(0);
  });
});
