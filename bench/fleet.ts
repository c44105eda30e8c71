import { readdirSync, readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { pino } from 'pino';
import type pg from 'pg';
import { loadConfig, type Config } from '../src/config.js';
import { connect, type DbHandle } from '../src/db/connect.js';
import { RUNNER_POOL } from '../src/db/connections.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { publishOutput } from '../src/queue/output-store.js';
import { admitSubmission } from '../src/quota/admit.js';
import type { RunResult } from '../src/result.js';
import { startRunner, type Executor, type Runner } from '../src/runner/daemon.js';
import type { Sandbox } from '../src/sandbox/spec.js';
import { createCluster, type Cluster } from '../test/helpers/pg-cluster.js';
import { pgbouncerMissing, startPgBouncer, type PgBouncer } from '../test/helpers/pgbouncer.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';

// How far one PostgreSQL goes: a load generator drives the real statements of a fleet
// against one PostgreSQL on this host, with NO SANDBOX: each run's stage is replaced by
// a sleep of STAGE_MS. Simulated runner hosts of HOST_SLOTS slots each are the real
// runner daemon (claim, heart-beat, complete-and-claim, each host with its own pool of
// RUNNER_POOL connections and its own LISTEN connection); one in OUTPUT_EVERY runs also
// writes its live output as a WebSocket run does (a chunk and the end marker, under the
// runner's claim); a simulated API host (a pool of 10) admits runs through the real
// runbox_admit, batched as the API batches them, keeping a backlog of queued runs so no
// slot waits for work. Each run is asynchronous with a callback URL, so its end also
// writes the callback outbox (no sender delivers them here). At 10, 100 and 1,000 slots,
// directly and through PgBouncer (transaction pooling), each with the runner hosts
// LISTENing (each on a direct connection) and polling (RUNBOX_DATABASE_LISTEN_URL=none),
// against a cluster of the benchmark's own (Debian's defaults, fsync on):
// runs/s against every slot kept busy, p50/p99 admission and claim latency, PostgreSQL's
// CPU (postmaster and every backend, from /proc), WAL bytes per run, and the runners'
// claims per run with those that found nothing. RUNBOX_BENCH_FLEET_WAKE=one,all also
// measures each LISTEN point as before wake tokens (every admission waking every host).

const STAGE_MS = Number(process.env.RUNBOX_BENCH_FLEET_STAGE_MS ?? 1000);
const HOST_SLOTS = Number(process.env.RUNBOX_BENCH_FLEET_HOST_SLOTS ?? 10);
const SLOTS = (process.env.RUNBOX_BENCH_FLEET_SLOTS ?? (QUICK ? '10,100' : '10,100,1000')).split(',').map(Number);
const MODES = (process.env.RUNBOX_BENCH_FLEET_MODES ?? 'direct,direct-polling,pgbouncer,pgbouncer-polling').split(',') as Mode[];
const WARMUP_S = QUICK ? 3 : 5;
const MEASURE_S = Number(process.env.RUNBOX_BENCH_FLEET_SECONDS ?? (QUICK ? 6 : 12));
const OUTPUT_EVERY = 4;
/** Accounts the runs are spread over: each run takes and gives back a slot on its account's row, so few accounts contend (50 gave half the runs/s of 500 at 1,000 slots). */
const ACCOUNTS = Number(process.env.RUNBOX_BENCH_FLEET_ACCOUNTS ?? 500);
const API_POOL = 10;
const ADMIT_LOOPS = 16;
/** Server connections PgBouncer opens per database: a few per core. */
const BOUNCER_POOL = 20;

/** How admissions wake runner hosts: one (a wake token, src/queue/wake.ts) or, as before it, all of them (runbox_jobs for every run). */
const WAKES = (process.env.RUNBOX_BENCH_FLEET_WAKE ?? 'one').split(',') as Wake[];
type Wake = 'one' | 'all';

/** Statements direct or through PgBouncer; runner hosts LISTENing (each on a direct connection) or polling. */
type Mode = 'direct' | 'direct-polling' | 'pgbouncer' | 'pgbouncer-polling';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const TICKS = 100; // USER_HZ: /proc CPU figures are in 1/100 s

/** CPU ms of a process and its waited-for children (utime + stime + cutime + cstime). */
function cpuMsOf(pid: number, withChildren: boolean): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const own = Number(f[11]) + Number(f[12]);
    return ((withChildren ? own + Number(f[13]) + Number(f[14]) : own) * 1000) / TICKS;
  } catch {
    return 0; // gone
  }
}

/** The cluster's CPU so far: the postmaster with its exited children, and every live child. */
function clusterCpuMs(postmaster: number): number {
  let total = cpuMsOf(postmaster, true);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === postmaster) total += cpuMsOf(Number(entry), false);
    } catch {
      // exited meanwhile
    }
  }
  return total;
}

type Kind = 'admit' | 'claim' | 'complete_claim' | 'output' | 'heartbeat';

/** Claims made by the runners' loops (a wake, a poll, a freed slot), and those that found nothing. */
interface ClaimCounts {
  claims: number;
  empty: number;
}

/** Times the statements of a pool's connections by what they are (the SQL says), and counts the claims that found nothing. */
function timeStatements(pool: pg.Pool, samples: Map<Kind, number[]>, measuring: () => boolean, counts?: ClaimCounts): void {
  const kindOf = (text: string): Kind | undefined =>
    text.includes('runbox_admit(')
      ? 'admit'
      : text.includes('claimed AS (')
        ? text.includes('done AS (')
          ? 'complete_claim'
          : 'claim'
        : text.includes('INSERT INTO submission_output')
          ? 'output'
          : text.includes('INSERT INTO runners')
            ? 'heartbeat'
            : undefined;
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const first = args[0] as string | { text?: string };
      const kind = kindOf(typeof first === 'string' ? first : (first?.text ?? ''));
      const t0 = performance.now();
      const out = query(...args);
      if (kind && out instanceof Promise) {
        out.then(
          (res: { rows?: { jobs?: unknown[] }[] }) => {
            if (!measuring()) return;
            samples.get(kind)!.push(performance.now() - t0);
            if (kind === 'claim' && counts) {
              counts.claims++;
              if ((res.rows?.[0]?.jobs?.length ?? 0) === 0) counts.empty++;
            }
          },
          () => {},
        );
      }
      return out;
    };
  });
}

const resultOf = (id: string, compiler: string, output: string): RunResult => ({
  id,
  compiler,
  status: 'success',
  output,
  error: '',
  exit_code: 0,
  signal: null,
  time: STAGE_MS / 1000,
  total: STAGE_MS / 1000,
  memory: 10_000,
  limit_exceeded: null,
  truncated: false,
  stdout_truncated: false,
  stderr_truncated: false,
  compile_output: null,
  extra_params: null,
});

const noSandbox: Sandbox = { launcher: 'none', run: () => Promise.reject(new Error('no sandbox in the fleet benchmark')) };

interface Point {
  mode: Mode;
  wake: Wake;
  slots: number;
  hosts: number;
  runsPerSecond: number;
  /** Every slot busy all the time: slots / stage length. */
  idealRunsPerSecond: number;
  admissionMs: ReturnType<typeof stats> | null;
  statementMs: Partial<Record<Kind, ReturnType<typeof stats>>>;
  postgresCpuMsPerRun: number;
  pgbouncerCpuMsPerRun: number | null;
  generatorCpuMsPerRun: number;
  walBytesPerRun: number;
  /** Connections PostgreSQL held during the run (client backends). */
  serverConnections: number;
  admissionErrors: number;
  /** Claims of the runners' loops per run, and those of them that found nothing (complete-and-claim not counted). */
  claimsPerRun: number;
  emptyClaimsPerRun: number;
  loadAverage: string;
}

async function measurePoint(cluster: Cluster, bouncer: PgBouncer | undefined, template: string, mode: Mode, slots: number, wake: Wake): Promise<Point> {
  const dbName = `fleet_${mode.replace(/-/g, '_')}_${slots}_${wake}`;
  await cluster.query(`CREATE DATABASE ${dbName} TEMPLATE ${template}`);
  const direct = cluster.url(dbName);
  if (wake === 'all') {
    // The previous release's admission: every run notifies every runner host.
    const c = connect(direct, { max: 1 });
    await sql`CREATE OR REPLACE FUNCTION runbox_wake_one() RETURNS void LANGUAGE sql AS $$ SELECT pg_notify('runbox_jobs', '') $$`.execute(c.db);
    await c.close();
  }
  const viaBouncer = mode.startsWith('pgbouncer');
  const statements = viaBouncer ? bouncer!.url(dbName) : direct;
  const named = !viaBouncer;
  const samples = new Map<Kind, number[]>((['admit', 'claim', 'complete_claim', 'output', 'heartbeat'] as Kind[]).map((k) => [k, []]));
  const claimCounts: ClaimCounts = { claims: 0, empty: 0 };
  let measuring = false;
  const admissions: number[] = [];
  const handles: DbHandle[] = [];
  const runners: Runner[] = [];
  const log = pino({ level: 'silent' });
  let started = 0;
  let admitted = 0;
  let admissionErrors = 0;
  let feeding = true;
  let feeders: Promise<void>[] = [];
  const admin = connect(direct, { max: 2, applicationName: 'bench-admin' });
  try {
    const accounts = (await admin.db.selectFrom('accounts').select('id').orderBy('id').execute()).map((r) => String(r.id));
    const keys = new Map((await admin.db.selectFrom('api_keys').select(['id', 'account_id']).execute()).map((k) => [String(k.account_id), String(k.id)]));

    // The runner hosts: the real daemon, each with its own pool and LISTEN connection.
    const hosts = Math.max(1, Math.round(slots / HOST_SLOTS));
    const base = loadConfig();
    for (let h = 0; h < hosts; h++) {
      const handle = connect(statements, { max: RUNNER_POOL, applicationName: 'bench-runner', namedStatements: named });
      timeStatements(handle.pool, samples, () => measuring, claimCounts);
      handles.push(handle);
      const id = `fleet-${h}`;
      const execute: Executor = async (job) => {
        started++;
        await sleep(STAGE_MS);
        // One in OUTPUT_EVERY streams its output as a WebSocket run does.
        if ((job.extra_params as { stream?: boolean } | null)?.stream) {
          await publishOutput(handle.db, id, job.attempts, { i: job.id, n: 0, s: 'stdout', d: 'hello\n' });
          await publishOutput(handle.db, id, job.attempts, { i: job.id, n: 1, end: true });
        }
        return resultOf(job.id, job.compiler, 'hello\n');
      };
      const config: Config = {
        ...base,
        RUNBOX_DATABASE_URL: statements,
        RUNBOX_DATABASE_POOLING: viaBouncer ? 'transaction' : 'session',
        // Each host its own LISTEN connection (a URL of its own), or none when polling.
        RUNBOX_DATABASE_LISTEN_URL: mode.endsWith('polling') ? 'none' : `${direct}?application_name=bench-listen-${h}`,
        RUNBOX_RUNNER_SLOTS: Math.min(HOST_SLOTS, slots),
        RUNBOX_RUNNER_ID: id,
        RUNBOX_POLL_MS: 1000,
        RUNBOX_LEASE_SECONDS: 60,
      };
      runners.push(await startRunner({ db: handle.db, config, sandbox: noSandbox, log, execute, drainMs: STAGE_MS * 3 }));
    }

    // The API host: admissions kept ahead of the slots (a backlog of queued runs).
    const api = connect(statements, { max: API_POOL, applicationName: 'bench-api', namedStatements: named });
    timeStatements(api.pool, samples, () => measuring);
    handles.push(api);
    const backlog = Math.max(50, slots);
    feeders = Array.from({ length: ADMIT_LOOPS }, async (_, loop) => {
      let n = loop;
      while (feeding) {
        if (admitted - started >= backlog) {
          await sleep(5);
          continue;
        }
        const account = accounts[n % accounts.length]!;
        const t0 = performance.now();
        try {
          const a = await admitSubmission(api.db, {
            accountId: account,
            keyId: keys.get(account) ?? null,
            compiler: 'python-3.9.7',
            code: 'print("hello")\n',
            input: null,
            tests: null,
            extraParams: n % OUTPUT_EVERY === 0 ? { stream: true } : null,
            maxAttempts: 3,
            now: new Date(),
          });
          if (a.admitted) admitted++;
          else admissionErrors++;
          if (measuring) admissions.push(performance.now() - t0);
        } catch {
          admissionErrors++;
          await sleep(50);
        }
        n += ADMIT_LOOPS;
      }
    });

    await sleep(WARMUP_S * 1000);
    const finished = async () =>
      Number((await sql<{ n: string }>`SELECT count(*) AS n FROM submissions WHERE state = 'finished'`.execute(admin.db)).rows[0]!.n);
    const lsn = async () => (await sql<{ l: string }>`SELECT pg_current_wal_lsn()::text AS l`.execute(admin.db)).rows[0]!.l;
    const postmaster = cluster.postmasterPid();
    const before = {
      finished: await finished(),
      lsn: await lsn(),
      pgCpu: clusterCpuMs(postmaster),
      bouncerCpu: bouncer ? cpuMsOf(bouncer.pid, true) : 0,
      own: process.cpuUsage(),
      at: performance.now(),
    };
    measuring = true;
    let serverConnections = 0;
    const end = performance.now() + MEASURE_S * 1000;
    while (performance.now() < end) {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend'`.execute(admin.db);
      serverConnections = Math.max(serverConnections, rows[0]!.n);
      await sleep(1000);
    }
    measuring = false;
    const seconds = (performance.now() - before.at) / 1000;
    const own = process.cpuUsage(before.own);
    const done = (await finished()) - before.finished;
    const pgCpu = clusterCpuMs(postmaster) - before.pgCpu;
    const bouncerCpu = bouncer ? cpuMsOf(bouncer.pid, true) - before.bouncerCpu : 0;
    const wal = Number(
      (await sql<{ b: string }>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${before.lsn}::pg_lsn)::bigint::text AS b`.execute(admin.db)).rows[0]!.b,
    );
    const statementMs: Point['statementMs'] = {};
    for (const [k, v] of samples) if (v.length > 0) statementMs[k] = stats(v);
    return {
      mode,
      wake,
      slots,
      hosts,
      runsPerSecond: done / seconds,
      idealRunsPerSecond: (slots * 1000) / STAGE_MS,
      admissionMs: admissions.length > 0 ? stats(admissions) : null,
      statementMs,
      postgresCpuMsPerRun: done > 0 ? pgCpu / done : 0,
      pgbouncerCpuMsPerRun: bouncer && viaBouncer && done > 0 ? bouncerCpu / done : null,
      generatorCpuMsPerRun: done > 0 ? (own.user + own.system) / 1000 / done : 0,
      walBytesPerRun: done > 0 ? wal / done : 0,
      serverConnections,
      admissionErrors,
      claimsPerRun: done > 0 ? claimCounts.claims / done : 0,
      emptyClaimsPerRun: done > 0 ? claimCounts.empty / done : 0,
      loadAverage: loadAverage(),
    };
  } finally {
    feeding = false;
    // Admissions in flight end before their pool does.
    await Promise.all(feeders);
    await Promise.all(runners.map((r) => r.stop()));
    for (const h of handles) await h.close();
    await admin.close();
    await cluster.query(`DROP DATABASE ${dbName} WITH (FORCE)`).catch(() => {});
  }
}

export async function benchFleet(): Promise<BenchOutcome> {
  const loadBefore = loadAverage();
  const hostsAtMost = Math.max(...SLOTS.map((s) => Math.ceil(s / HOST_SLOTS)));
  // Room for the direct runs: every host's pool and LISTEN connection, the API's pool, this benchmark.
  const maxConnections = hostsAtMost * (RUNNER_POOL + 1) + API_POOL + 20;
  const cluster = await createCluster({ listen: '127.0.0.1', maxConnections });
  const skipBouncer = pgbouncerMissing();
  let bouncer: PgBouncer | undefined;
  const points: Point[] = [];
  try {
    // One migrated database with the accounts and keys, copied for each point.
    const template = 'fleet_template';
    await cluster.query(`CREATE DATABASE ${template}`);
    const t = connect(cluster.url(template), { max: 2 });
    try {
      await migrateToLatest(t.db);
      for (let i = 0; i < ACCOUNTS; i++) {
        const a = await t.db
          .insertInto('accounts')
          .values({ email: `fleet${i}@example.test`, plan: 'free', running: 100_000, per_minute: 100_000, pending: 100_000, monthly_limit: 10_000_000 })
          .returning('id')
          .executeTakeFirstOrThrow();
        await t.db
          .insertInto('api_keys')
          .values({
            account_id: a.id,
            key_hash: Buffer.from(`fleet-${i}`),
            key_prefix: 'rbx_flt',
            app_name: 'fleet',
            redirect_url: 'https://callback.example.com/hook',
            kind: 'api',
            signing_secret: 'secret',
          })
          .execute();
      }
    } finally {
      await t.close();
    }
    if (!skipBouncer) bouncer = await startPgBouncer({ host: '127.0.0.1', port: cluster.port, poolMode: 'transaction', poolSize: BOUNCER_POOL, maxClientConn: 2000 });
    for (const slots of SLOTS) {
      for (const mode of MODES) {
        if (mode.startsWith('pgbouncer') && !bouncer) continue;
        for (const wake of mode.endsWith('polling') ? (['one'] as Wake[]) : WAKES) {
          console.error(`   fleet: ${slots} slots, ${mode}, wakes ${wake} (load average ${loadAverage()})`);
          points.push(await measurePoint(cluster, bouncer, template, mode, slots, wake));
        }
      }
    }
  } finally {
    await bouncer?.stop();
    cluster.remove();
  }

  const result = {
    date: new Date().toISOString(),
    note: `no sandbox: each run's stage is a sleep of ${STAGE_MS} ms`,
    stageMs: STAGE_MS,
    hostSlots: HOST_SLOTS,
    runnerPool: RUNNER_POOL,
    apiPool: API_POOL,
    bouncerPool: BOUNCER_POOL,
    outputEvery: OUTPUT_EVERY,
    accounts: ACCOUNTS,
    measureSeconds: MEASURE_S,
    maxConnections,
    pgbouncer: skipBouncer ?? 'PgBouncer 1.18, transaction pooling',
    loadAverageBefore: loadBefore,
    loadAverageAfter: loadAverage(),
    points,
  };
  writeResult('fleet', result);

  const rows: Row[] = [];
  const label = (p: Point) =>
    `${p.slots} slots (${p.hosts} hosts × ${Math.min(HOST_SLOTS, p.slots)}), ${p.mode}${p.mode.endsWith('polling') ? '' : p.wake === 'one' ? ', wakes one' : ', wakes all (before)'}, load ${p.loadAverage}`;
  for (const p of points) {
    rows.push(
      row({ benchmark: 'fleet', figure: `runs/s, ${label(p)}, stage = sleep ${STAGE_MS} ms`, unit: 'runs/s', value: p.runsPerSecond, baseline: p.idealRunsPerSecond, baselineIs: 'every slot busy', target: 'report', met: null }),
      row({ benchmark: 'fleet', figure: `admission p50 / p99, ${label(p)}`, unit: 'ms', value: p.admissionMs?.median ?? 0, baseline: null, baselineIs: '', target: `p99 ${p.admissionMs?.p99.toFixed(1) ?? '–'} ms`, met: null }),
      row({ benchmark: 'fleet', figure: `claim (complete-and-claim) p50 / p99, ${label(p)}`, unit: 'ms', value: p.statementMs.complete_claim?.median ?? 0, baseline: null, baselineIs: '', target: `p99 ${p.statementMs.complete_claim?.p99.toFixed(1) ?? '–'} ms`, met: null }),
      row({ benchmark: 'fleet', figure: `PostgreSQL CPU per run, ${label(p)}`, unit: 'ms', value: p.postgresCpuMsPerRun, baseline: null, baselineIs: '', target: 'report', met: null }),
      row({ benchmark: 'fleet', figure: `empty claims per run (of ${p.claimsPerRun.toFixed(2)} claims per run), ${label(p)}`, unit: '', value: p.emptyClaimsPerRun, baseline: null, baselineIs: '', target: 'report', met: null }),
      row({ benchmark: 'fleet', figure: `WAL per run, ${label(p)}`, unit: 'KB', value: p.walBytesPerRun / 1024, baseline: null, baselineIs: '', target: 'report', met: null }),
      row({ benchmark: 'fleet', figure: `PostgreSQL connections, ${label(p)}`, unit: '', value: p.serverConnections, baseline: null, baselineIs: '', target: 'report', met: null }),
    );
  }
  return { result, rows };
}

runIfMain(import.meta.url, benchFleet);
