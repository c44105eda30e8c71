import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { sql } from 'kysely';
import { createAccount, setAccountLimits } from '../../src/accounts/accounts.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { RunResult } from '../../src/result.js';
import { CallbackReceiver } from '../helpers/callback-receiver.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { createNetwork, probeHost, type HostCapabilities, type Network } from '../helpers/netns.js';
import { createCluster, serverBinaries, type Cluster } from '../helpers/pg-cluster.js';
import { apiUrlOf, Processes, type Proc, sleep, until, waitForLine } from '../helpers/processes.js';
import { expectNoDrift, waitForStates } from '../helpers/queue-rows.js';
import { realRunsUnavailable } from '../helpers/results-stack.js';

// Partitions and failures with real processes on "hosts" made of network namespaces
// (test/helpers/netns.ts): two API hosts (API and callback sender, as the API unit runs
// them) and two runner hosts, joined by a bridge to PostgreSQL, which listens on the
// bridge's address only (a cluster of the test's own: the machine's cluster and its
// configuration are not touched). Links are cut while runs are in flight and healed;
// PostgreSQL is restarted; latency is added where the kernel has netem. Each case says
// what it shows; together they run in about two minutes.

const PY = 'python-3.9.7';
const LEASE_SECONDS = 5;
/** How long after a cut an API host's health says the database is unreachable: its check gives up after 2 s. */
const HEALTH_WITHIN_MS = 3000;
/** The throughput kept with 50 ms between runners and PostgreSQL, for runs of 0.3 s. */
const LATENCY_FRACTION = 0.7;

describe('partitions and failures: hosts in network namespaces', function () {
  this.timeout(180_000);
  let caps: HostCapabilities = {};
  let why: string | undefined;
  let net: Network | undefined;
  let cluster: Cluster | undefined;
  let admin: DbHandle;
  let receiver: CallbackReceiver;
  let hook: string;
  const procs = new Processes();
  let apis: { name: string; proc: Proc; url: string }[] = [];
  let runners: Record<string, Proc> = {};

  before(async function () {
    why = realRunsUnavailable(['python3.9']) ?? (serverBinaries() ? undefined : 'no PostgreSQL server binaries under /usr/lib/postgresql');
    if (!why) {
      caps = probeHost();
      why = caps.netns;
    }
    if (why) return;
    net = createNetwork(['api1', 'api2', 'run1', 'run2']);
    cluster = await createCluster({
      listen: net.gateway,
      hba: [`host all all ${net.subnet} trust`],
      settings: { fsync: 'off' },
    });
    await cluster.query('CREATE DATABASE runbox');
    admin = connect(cluster.url('runbox'), { max: 4, applicationName: 'runbox-test' });
    await migrateToLatest(admin.db);
    receiver = new CallbackReceiver();
    hook = await receiver.start(net.gateway);

    // Reachable only over the bridge: each host's URL names the bridge's address.
    const env = {
      RUNBOX_DATABASE_URL: cluster.url('runbox', net.gateway),
      RUNBOX_LEASE_SECONDS: String(LEASE_SECONDS),
      RUNBOX_POLL_MS: '300',
      RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
      RUNBOX_CALLBACK_BACKOFF_MS: '200',
    };
    for (const name of ['api1', 'api2']) {
      const host = net.host(name);
      const proc = procs.launch(name, 'start.js', { ...env, RUNBOX_COMPONENTS: 'api,sender', RUNBOX_HOST: host.address, RUNBOX_PORT: '0' }, host.wrap);
      apis.push({ name, proc, url: '' });
    }
    for (const [name, id] of [
      ['run1', 'runner-1'],
      ['run2', 'runner-2'],
    ] as const) {
      runners[name] = procs.launch(name, 'start.js', { ...env, RUNBOX_COMPONENTS: 'runner', RUNBOX_RUNNER_ID: id, RUNBOX_RUNNER_SLOTS: '2' }, net.host(name).wrap);
    }
    apis = await Promise.all(apis.map(async (a) => ({ ...a, url: await apiUrlOf(a.proc, net!.host(a.name).address) })));
    await until('both runners registered', async () => (await admin.db.selectFrom('runners').select('id').execute()).length === 2);
  });
  beforeEach(function () {
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(procs.tails(30));
  });
  after(async () => {
    await procs.stopAll();
    await receiver?.close();
    await admin?.close();
    cluster?.remove();
    net?.remove();
  });

  /** An account with a key whose callbacks go to the receiver. */
  async function keyed(email: string, limits: Parameters<typeof setAccountLimits>[2] = {}): Promise<{ account: string; key: CreatedKey }> {
    const account = await createAccount(admin.db, email);
    await setAccountLimits(admin.db, account.id, { perMinute: 1000, pending: 1000, running: 8, ...limits });
    return { account: account.id, key: await createKey(admin.db, { accountId: account.id, appName: email, redirectUrl: hook }) };
  }

  async function submit(api: string, key: CreatedKey, code: string): Promise<{ status: number; id: string | null; at: number }> {
    const res = await fetch(`${api}/api/v2/run-code/`, {
      method: 'POST',
      headers: { Authorization: key.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ code, compiler: PY }),
    });
    await res.text();
    return { status: res.status, id: res.headers.get('x-submission-id'), at: Date.now() };
  }

  const usage = async (account: string) =>
    (await admin.db.selectFrom('account_usage').select('submissions').where('account_id', '=', account).executeTakeFirst())?.submissions ?? 0;

  it('a runner cut off mid-run: its lease runs out, the other runner runs the job, and its late completion is refused when the link comes back', async () => {
    const { account, key } = await keyed('cut-runner@example.test');
    const job = await submit(apis[1]!.url, key, 'import time\ntime.sleep(2)\nprint("done")\n');
    expect(job.status).to.equal(200);
    const id = job.id!;
    await until('the job running', async () => (await admin.db.selectFrom('submissions').select('state').where('id', '=', id).executeTakeFirstOrThrow()).state === 'running');
    const first = (await admin.db.selectFrom('submissions').select('locked_by').where('id', '=', id).executeTakeFirstOrThrow()).locked_by!;
    const cutName = first === 'runner-1' ? 'run1' : 'run2';
    const other = first === 'runner-1' ? 'runner-2' : 'runner-1';
    await sleep(500); // inside its sandbox
    net!.setLink(cutName, false);
    const cutAt = Date.now();
    try {
      // The run ends during the cut; its result cannot reach the database. The lease runs out
      // and the other runner (which reaps every third of the lease) runs the job again.
      await until(
        'the other runner to finish the job',
        async () => {
          const r = await admin.db.selectFrom('submissions').select(['state', 'locked_by']).where('id', '=', id).executeTakeFirstOrThrow();
          return r.state === 'finished' && r.locked_by === other;
        },
        60_000,
      );
      // Not before the lease could have run out.
      expect(Date.now() - cutAt).to.be.at.least((LEASE_SECONDS - 1) * 1000);
    } finally {
      net!.setLink(cutName, true);
    }
    // The link is back: the cut runner's stalled statements reach the database (TCP retransmits)
    // and its completion is refused by the ownership check.
    const dropped = await waitForLine(runners[cutName]!, (l) => l['msg'] === 'job finished but its lease was gone; result dropped' && l['submission'] === id, 90_000);
    expect(dropped['attempt']).to.equal(1);
    await until('the callback', () => receiver.attemptsBySubmission.has(id), 30_000);
    await sleep(1500); // room for a second callback, were there one

    const row = await admin.db.selectFrom('submissions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).to.include({ state: 'finished', locked_by: other, attempts: 2, refunded: false });
    expect((row.result as RunResult).output).to.equal('done\n');
    const deliveries = await admin.db.selectFrom('callback_deliveries').select(['state']).where('submission_id', '=', id).execute();
    expect(deliveries).to.deep.equal([{ state: 'delivered' }]);
    expect(receiver.attemptsBySubmission.get(id), 'callbacks received').to.equal(1);
    expect(await usage(account), 'billed once').to.equal(1);
    await expectNoDrift(admin.db);
    // The healed runner works again: both heart-beat.
    await until('both runners heart-beating', async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM runners WHERE last_seen > now() - interval '3 seconds'`.execute(admin.db);
      return rows[0]!.n === 2;
    });
  });

  it(`an API host cut off from PostgreSQL: its health says so within ${HEALTH_WITHIN_MS / 1000} s, the other keeps admitting, and the limit holds across both`, async function () {
    if (caps.nft) {
      console.log(`      SKIPPED: ${caps.nft}`);
      this.skip();
    }
    const perMinute = 12;
    const { account, key } = await keyed('cut-api@example.test', { perMinute });
    const [cut, kept] = apis as [(typeof apis)[0], (typeof apis)[0]];
    expect((await fetch(`${cut.url}/api/health`)).status).to.equal(200);
    net!.block(cut.name, net!.gateway, cluster!.port);
    let healedAt = Infinity;
    try {
      const asked = Date.now();
      const health = await fetch(`${cut.url}/api/health`);
      const tookMs = Date.now() - asked;
      expect(health.status).to.equal(503);
      expect(((await health.json()) as { status: string }).status).to.equal('unavailable');
      expect(tookMs).to.be.below(HEALTH_WITHIN_MS);
      expect((await fetch(`${kept.url}/api/health`)).status).to.equal(200);

      // Requests to both hosts at once: the kept one answers them all while the other is cut off.
      const code = 'print("limit")';
      const toKept = Promise.all(Array.from({ length: 15 }, () => submit(kept.url, key, code)));
      const toCut = Promise.all(Array.from({ length: 15 }, () => submit(cut.url, key, code)));
      const keptAnswers = await toKept;
      expect(keptAnswers.filter((a) => a.status === 200).length, 'the kept host admits up to the limit').to.equal(perMinute);
      expect(keptAnswers.filter((a) => a.status === 429).length).to.equal(15 - perMinute);
      await sleep(1000);
      net!.unblock(cut.name);
      healedAt = Date.now();
      const cutAnswers = await toCut;
      // Nothing more was admitted: the cut host's requests, answered once it could reach the
      // database again (or refused with 503 meanwhile), found the minute's allowance spent.
      expect(cutAnswers.every((a) => a.status === 429 || a.status === 503), JSON.stringify(cutAnswers.map((a) => a.status))).to.equal(true);
      expect(keptAnswers.every((a) => a.at < healedAt)).to.equal(true);
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM submissions WHERE account_id = ${account}`.execute(admin.db);
      expect(rows[0]!.n).to.equal(perMinute);
      expect(await usage(account)).to.equal(perMinute);
    } finally {
      if (healedAt === Infinity) net!.unblock(cut.name);
    }
    await until('the cut host healthy again', async () => (await fetch(`${cut.url}/api/health`)).status === 200, 30_000);
  });

  it('PostgreSQL restarted with runs in flight: every run ends once, each callback arrives, usage exact, no process restarted', async () => {
    const { account, key } = await keyed('restart@example.test');
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(apis[i % 2]!.url, key, `import time\ntime.sleep(0.5)\nprint(${i})\n`)));
    expect(answers.map((a) => a.status)).to.deep.equal(answers.map(() => 200));
    const ids = answers.map((a) => a.id!);
    await until('runs in flight', async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM submissions WHERE state = 'running' AND id = ANY(${ids}::uuid[])`.execute(admin.db);
      return rows[0]!.n > 0;
    });
    await admin.close();
    cluster!.stop();
    await sleep(1000);
    cluster!.start();
    admin = connect(cluster!.url('runbox'), { max: 4, applicationName: 'runbox-test' });
    await waitForStates(admin.db, ids, ['finished', 'failed']);
    const rows = await admin.db.selectFrom('submissions').select(['id', 'state', 'result']).where('id', 'in', ids).execute();
    expect(rows.map((r) => r.state)).to.deep.equal(rows.map(() => 'finished'));
    expect(rows.map((r) => (r.result as RunResult).output).sort()).to.deep.equal(ids.map((_, i) => `${i}\n`).sort());
    await until('every callback', () => ids.every((id) => receiver.attemptsBySubmission.has(id)), 60_000);
    const deliveries = await admin.db.selectFrom('callback_deliveries').select(['submission_id', 'state']).where('submission_id', 'in', ids).execute();
    expect(deliveries.length, 'one delivery per run').to.equal(ids.length);
    expect(await usage(account)).to.equal(ids.length);
    await expectNoDrift(admin.db);
    for (const p of procs.all) expect(p.child.exitCode, p.name).to.equal(null);
    for (const a of apis) await until(`${a.name} healthy`, async () => (await fetch(`${a.url}/api/health`)).status === 200, 30_000);
  });

  it(`50 ms between the runners and PostgreSQL: runs complete, and throughput stays within ${LATENCY_FRACTION} of it without`, async function () {
    if (caps.netem) {
      console.log(`      SKIPPED: ${caps.netem}`);
      this.skip();
    }
    const { key } = await keyed('latency@example.test');
    const batch = async () => {
      const answers = await Promise.all(Array.from({ length: 16 }, (_, i) => submit(apis[i % 2]!.url, key, 'import time\ntime.sleep(0.3)\n')));
      const ids = answers.map((a) => a.id!);
      await waitForStates(admin.db, ids, ['finished', 'failed']);
      const { rows } = await sql<{ first: Date; last: Date; ok: number }>`
        SELECT min(started_at) AS first, max(finished_at) AS last, count(*) FILTER (WHERE state = 'finished')::int AS ok
          FROM submissions WHERE id = ANY(${ids}::uuid[])`.execute(admin.db);
      const r = rows[0]!;
      expect(r.ok).to.equal(ids.length);
      return ids.length / ((r.last.getTime() - r.first.getTime()) / 1000);
    };
    const without = await batch();
    net!.delay('run1', 50);
    net!.delay('run2', 50);
    try {
      const withLatency = await batch();
      console.log(`      runs/s without ${without.toFixed(2)}, with 50 ms ${withLatency.toFixed(2)} (${(withLatency / without).toFixed(2)}×)`);
      expect(withLatency / without).to.be.at.least(LATENCY_FRACTION);
    } finally {
      net!.delay('run1', 0);
      net!.delay('run2', 0);
    }
  });
});

describe('clock skew: hosts whose clocks are off bill, limit and lease by the database\'s time', function () {
  this.timeout(90_000);
  // libfaketime preloaded into the process itself (the faketime command would run it as
  // a child of its own, which a test's kill would leave behind).
  const arch = process.arch === 'arm64' ? 'aarch64-linux-gnu' : 'x86_64-linux-gnu';
  const FAKETIME = `/usr/lib/${arch}/faketime/libfaketime.so.1`;
  let t: TestDatabase;
  const procs = new Processes();

  before(async () => {
    t = await freshDatabase('clock_skew');
  });
  beforeEach(function () {
    const missing = !existsSync(FAKETIME) ? `${FAKETIME} is not installed (apt-get install faketime; npm run setup installs it)` : realRunsUnavailable(['python3.9']);
    if (missing) {
      console.log(`      SKIPPED: ${missing}`);
      this.skip();
    }
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') console.log(procs.tails(30));
  });
  after(async () => {
    await procs.stopAll();
    await t?.drop();
  });

  it('an API host 45 days behind and a runner 45 days ahead: the minute\'s limit is exact across hosts, runs bill this month, leases hold', async () => {
    const perMinute = 10;
    const account = await createAccount(t.db, 'skew@example.test');
    await setAccountLimits(t.db, account.id, { perMinute, pending: 1000, running: 4 });
    const key = await createKey(t.db, { accountId: account.id, appName: 'skew' });
    // libfaketime shifts what the process reads as the time of day; its monotonic clock stays true.
    const skew = (days: string) => ({ LD_PRELOAD: FAKETIME, FAKETIME: days, FAKETIME_DONT_FAKE_MONOTONIC: '1' });
    const env = { RUNBOX_DATABASE_URL: t.url, RUNBOX_LEASE_SECONDS: String(LEASE_SECONDS) };
    const behind = procs.launch('api-behind', 'api.js', { ...env, ...skew('-45d'), RUNBOX_PORT: '0' });
    const right = procs.launch('api-right', 'api.js', { ...env, RUNBOX_PORT: '0' });
    const ahead = procs.launch('runner-ahead', 'start.js', { ...env, ...skew('+45d'), RUNBOX_COMPONENTS: 'runner', RUNBOX_RUNNER_ID: 'ahead', RUNBOX_RUNNER_SLOTS: '2' });
    const [behindUrl, rightUrl] = await Promise.all([apiUrlOf(behind), apiUrlOf(right)]);
    await waitForLine(ahead, (l) => l['msg'] === 'runner started');
    // The skew is real: each process's own clock reads 45 days off (its log lines' times).
    const daysOff = (l: Record<string, unknown>) => (Date.parse(String(l['time'])) - Date.now()) / 86_400_000;
    expect(daysOff(await waitForLine(ahead, (l) => l['msg'] === 'runner started'))).to.be.within(44, 46);

    const post = (url: string, code: string) =>
      fetch(`${url}/api/v2/run-code/`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/json' }, body: JSON.stringify({ code, compiler: PY }) });
    // The skewed host first: by its own clock its runs would be 45 days old, out of the other host's minute.
    const first = await Promise.all(Array.from({ length: 8 }, () => post(behindUrl, 'print(1)')));
    const then = await Promise.all(Array.from({ length: 8 }, () => post(rightUrl, 'print(1)')));
    const statuses = [...first, ...then].map((r) => r.status);
    expect(daysOff(await waitForLine(behind, (l) => l['msg'] === 'api request'))).to.be.within(-46, -44);
    expect(statuses.filter((s) => s === 200).length, JSON.stringify(statuses)).to.equal(perMinute);
    const { rows } = await sql<{ months: string[]; spread: number; n: number }>`
      SELECT array_agg(DISTINCT month) AS months, extract(epoch FROM max(created_at) - min(created_at))::float8 AS spread, count(*)::int AS n
        FROM submissions WHERE account_id = ${account.id}`.execute(t.db);
    const dbMonth = (await sql<{ m: string }>`SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM') AS m`.execute(t.db)).rows[0]!.m;
    expect(rows[0]).to.deep.include({ months: [dbMonth], n: perMinute });
    expect(rows[0]!.spread, 'created_at from the database clock').to.be.below(60);
    // The skewed host reports this month's usage, as the others do.
    const usage = (await (await fetch(`${behindUrl}/api/usage/`, { headers: { Authorization: key.key } })).json()) as { month: string; submissions: number };
    expect(usage).to.include({ month: dbMonth, submissions: perMinute });

    // A run longer than the lease on the runner whose clock is ahead: its heart-beats keep
    // the lease (the database's now() + LEASE), so a runner with a true clock, reaping
    // expired leases meanwhile, leaves it alone and it runs once.
    await waitForStates(
      t.db,
      (await t.db.selectFrom('submissions').select('id').execute()).map((r) => r.id),
      ['finished'],
    );
    await setAccountLimits(t.db, account.id, { perMinute: 1000 });
    const long = await post(rightUrl, `import time\ntime.sleep(${LEASE_SECONDS + 3})\nprint("long")\n`);
    expect(long.status).to.equal(200);
    const longId = String(long.headers.get('x-submission-id'));
    await until('the long run started', async () => (await t.db.selectFrom('submissions').select('state').where('id', '=', longId).executeTakeFirstOrThrow()).state === 'running');
    procs.launch('runner-right', 'start.js', { ...env, RUNBOX_COMPONENTS: 'runner', RUNBOX_RUNNER_ID: 'right', RUNBOX_RUNNER_SLOTS: '1' });
    await waitForStates(t.db, [longId], ['finished', 'failed']);
    const row = await t.db.selectFrom('submissions').selectAll().where('id', '=', longId).executeTakeFirstOrThrow();
    expect(row).to.include({ state: 'finished', attempts: 1, locked_by: 'ahead' });
    expect((row.result as RunResult).output).to.equal('long\n');
  });
});
