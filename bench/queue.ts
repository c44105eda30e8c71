import { sql } from 'kysely';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import type { Db } from '../src/db/connect.js';
import { createDoneWatcher, JOBS_CHANNEL } from '../src/queue/index.js';
import type { RunResult } from '../src/result.js';
import { startRunner, type Executor } from '../src/runner/daemon.js';
import type { Sandbox } from '../src/sandbox/spec.js';
import { freshDatabase } from '../test/helpers/db.js';
import { enqueue, makeAccount } from '../test/helpers/queue-rows.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome } from './common.js';

// The queue alone, with runs that take no time (a no-op executor): how many jobs per
// second four runner loops move through claim → complete with per-account limits in
// force. The baseline, in the same database and run, is the textbook Postgres queue:
// four loops that each claim one row with UPDATE … FOR UPDATE SKIP LOCKED and mark it
// done with a second UPDATE; that is what any Postgres queue pays per job. Also
// reported: how long an idle runner takes to pick up a new job (insert + NOTIFY →
// result seen through runbox_done).

const JOBS = Number(process.env.RUNBOX_BENCH_JOBS ?? (QUICK ? 300 : 2000));
const ACCOUNTS = 50;
const LOOPS = 4;
const PICKUPS = QUICK ? 10 : 40;

const noop: Executor = async (job) =>
  ({
    id: job.id,
    compiler: job.compiler,
    status: 'success',
    output: '',
    error: '',
    exit_code: 0,
    signal: null,
    time: 0,
    total: 0,
    memory: null,
    limit_exceeded: null,
    truncated: false,
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    extra_params: null,
  }) satisfies RunResult;

// Never called: the executor above replaces the sandbox.
const noSandbox: Sandbox = { launcher: 'none', run: () => Promise.reject(new Error('no sandbox in the queue benchmark')) };

async function unfinished(db: Db): Promise<number> {
  const row = await db.selectFrom('submissions').select((eb) => eb.fn.countAll<string>().as('n')).where('state', '!=', 'finished').executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The baseline: the minimal SKIP LOCKED queue, same job count, same number of loops. */
async function bareQueue(db: Db, jobs: number): Promise<number> {
  await sql`CREATE TABLE bench_bare_jobs (id bigserial PRIMARY KEY, state text NOT NULL DEFAULT 'queued', locked_by text)`.execute(db);
  await sql`CREATE INDEX bench_bare_jobs_queued ON bench_bare_jobs(id) WHERE state = 'queued'`.execute(db);
  await sql`INSERT INTO bench_bare_jobs (state) SELECT 'queued' FROM generate_series(1, ${jobs})`.execute(db);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: LOOPS }, async (_, i) => {
      const me = `bare-${i}`;
      for (;;) {
        const { rows } = await sql<{ id: string }>`
          UPDATE bench_bare_jobs SET state = 'running', locked_by = ${me}
          WHERE id = (SELECT id FROM bench_bare_jobs WHERE state = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING id`.execute(db);
        if (rows.length === 0) return;
        await sql`UPDATE bench_bare_jobs SET state = 'finished' WHERE id = ${rows[0]!.id} AND locked_by = ${me}`.execute(db);
      }
    }),
  );
  return jobs / ((performance.now() - t0) / 1000);
}

export async function benchQueue(): Promise<BenchOutcome> {
  const t = await freshDatabase('bench_queue');
  const log = pino({ level: 'silent' });
  const loadBefore = loadAverage();
  try {
    const accounts: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await makeAccount(t.db, { running: LOOPS }));
    for (let i = 0; i < JOBS; i++) await enqueue(t.db, accounts[i % ACCOUNTS]!);

    const bareJobsPerSecond = await bareQueue(t.db, JOBS);

    // One slot per runner: four loops, each claiming and completing one job at a time, like the baseline.
    const config = { ...loadConfig(), RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: 1, RUNBOX_POLL_MS: 1000 };
    const t0 = performance.now();
    const runners = await Promise.all(
      Array.from({ length: LOOPS }, (_, i) =>
        startRunner({ db: t.db, config: { ...config, RUNBOX_RUNNER_ID: `bench-${i}` }, sandbox: noSandbox, log, execute: noop }),
      ),
    );
    while ((await unfinished(t.db)) > 0) await new Promise((r) => setTimeout(r, 20));
    const drainSeconds = (performance.now() - t0) / 1000;
    const jobsPerSecond = JOBS / drainSeconds;

    // Pick-up: one job at a time into idle runners, waited for through runbox_done.
    const watcher = createDoneWatcher({ url: t.url, db: t.db, pollMs: 60_000 });
    await watcher.ready();
    const pickup: number[] = [];
    for (let i = 0; i < PICKUPS; i++) {
      const t1 = performance.now();
      const id = await t.db.transaction().execute(async (trx) => {
        const id = await enqueue(trx, accounts[0]!, { mode: 'sync' });
        await sql`SELECT pg_notify(${JOBS_CHANNEL}, ${id})`.execute(trx);
        return id;
      });
      await watcher.waitFor(id);
      pickup.push(performance.now() - t1);
    }
    await watcher.close();
    await Promise.all(runners.map((r) => r.stop()));

    const result = {
      date: new Date().toISOString(),
      jobs: JOBS,
      accounts: ACCOUNTS,
      runnerLoops: LOOPS,
      slotsPerRunner: 1,
      drain: { seconds: +drainSeconds.toFixed(2), jobsPerSecond: Math.round(jobsPerSecond) },
      bareSkipLockedJobsPerSecond: Math.round(bareJobsPerSecond),
      pickupMs: stats(pickup),
      loadAverage: { before: loadBefore, after: loadAverage() },
    };
    console.error(`queue: written to ${writeResult('queue', result)}`);
    return {
      result,
      rows: [
        row({ benchmark: 'queue', figure: `jobs claimed + completed, ${LOOPS} runner loops, no-op executor`, unit: 'jobs/s', value: jobsPerSecond, baseline: bareJobsPerSecond, baselineIs: 'bare SKIP LOCKED queue', target: 'report', met: null }),
      ],
    };
  } finally {
    await t.drop();
  }
}

runIfMain(import.meta.url, benchQueue);
