import { mkdirSync, writeFileSync } from 'node:fs';
import { sql } from 'kysely';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import { createDoneWatcher, JOBS_CHANNEL } from '../src/queue/index.js';
import type { RunResult } from '../src/result.js';
import { startRunner, type Executor } from '../src/runner/daemon.js';
import type { Sandbox } from '../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../src/util/paths.js';
import { freshDatabase } from '../test/helpers/db.js';
import { enqueue, makeAccount } from '../test/helpers/queue-rows.js';

// The queue alone, with runs that take no time (a no-op executor): how many jobs per
// second two runners move through claim → complete with per-account limits in force,
// and how long an idle runner takes to pick up a new job (insert + NOTIFY → result).

const JOBS = Number(process.env.RUNBOX_BENCH_JOBS ?? 2000);
const ACCOUNTS = 50;
const RUNNERS = 2;
const SLOTS = 8;
const PICKUPS = Number(process.env.RUNBOX_BENCH_ROUNDS ?? 40);

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
    truncated: false,
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    extra_params: null,
  }) satisfies RunResult;

// Never called: the executor above replaces the sandbox.
const noSandbox: Sandbox = { launcher: 'none', run: () => Promise.reject(new Error('no sandbox in the queue benchmark')) };

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: +at(0.5).toFixed(2), p95: +at(0.95).toFixed(2), min: +s[0]!.toFixed(2), runs: s.length };
}

export async function benchQueue(): Promise<Record<string, unknown>> {
  const t = await freshDatabase('bench_queue');
  const log = pino({ level: 'silent' });
  try {
    const accounts: string[] = [];
    for (let i = 0; i < ACCOUNTS; i++) accounts.push(await makeAccount(t.db, { running: 4 }));
    for (let i = 0; i < JOBS; i++) await enqueue(t.db, accounts[i % ACCOUNTS]!);

    const config = { ...loadConfig(), RUNBOX_DATABASE_URL: t.url, RUNBOX_RUNNER_SLOTS: SLOTS, RUNBOX_POLL_MS: 1000 };
    const t0 = performance.now();
    const runners = await Promise.all(
      Array.from({ length: RUNNERS }, (_, i) =>
        startRunner({ db: t.db, config: { ...config, RUNBOX_RUNNER_ID: `bench-${i}` }, sandbox: noSandbox, log, execute: noop }),
      ),
    );
    for (;;) {
      const row = await t.db.selectFrom('submissions').select((eb) => eb.fn.countAll<string>().as('n')).where('state', '!=', 'finished').executeTakeFirstOrThrow();
      if (Number(row.n) === 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const drainSeconds = (performance.now() - t0) / 1000;

    // Pick-up: one job at a time into idle runners, waited for through runbox_done.
    const watcher = createDoneWatcher({ url: t.url, db: t.db, pollMs: 60_000 });
    await watcher.ready();
    const pickup: number[] = [];
    for (let i = 0; i < PICKUPS; i++) {
      const t1 = performance.now();
      const id = await t.db.transaction().execute(async (trx) => {
        const id = await enqueue(trx, accounts[0]!);
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
      runners: RUNNERS,
      slotsPerRunner: SLOTS,
      drain: { seconds: +drainSeconds.toFixed(2), jobsPerSecond: Math.round(JOBS / drainSeconds) },
      pickupMs: stats(pickup),
    };
    const dir = join(PROJECT_ROOT, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, `${result.date.slice(0, 10)}-queue.json`);
    writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    console.log(JSON.stringify(result, null, 2));
    console.log(`written to ${file}`);
    return result;
  } finally {
    await t.drop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchQueue().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
