import { sql } from 'kysely';
import { loadAverage, QUICK, row, runIfMain, writeResult, type BenchOutcome } from './common.js';
import { bareHello, benchStack, HELLO_PY, imageRootfs, load, PYTHON, unsuccessful } from './stack.js';

// Runs finished per second with every runner slot busy: a backlog of python hello
// worlds is submitted through the API (runner stopped), then the runner is started and
// drains it; the rate is taken between the first and the last finish, so the runner's
// start-up is not in it. Baseline: the same number of bare interpreter processes
// (chroot into the same image), as many at a time as the runner has slots. Rounds
// alternate between the two.

const JOBS = Number(process.env.RUNBOX_BENCH_RUNS ?? (QUICK ? 40 : 300));
const ROUNDS = QUICK ? 1 : 2;
const TARGET_RATIO = 0.6;

async function barePool(rootfs: string, jobs: number, parallel: number): Promise<number> {
  let left = jobs;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (left-- > 0) await bareHello(rootfs);
    }),
  );
  return jobs / ((performance.now() - t0) / 1000);
}

export async function benchThroughput(): Promise<BenchOutcome> {
  const s = await benchStack('bench_throughput', { accounts: 20 });
  const loadBefore = loadAverage();
  const slots = s.config.RUNBOX_RUNNER_SLOTS;
  try {
    const rootfs = imageRootfs(s.config, 'python3.9');
    const runnerRates: number[] = [];
    const bareRates: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bareRates.push(await barePool(rootfs, JOBS, slots));

      // Earlier rounds' rows stay; this round's are those created from here on.
      const since = (await sql<{ t: Date }>`SELECT clock_timestamp() AS t`.execute(s.db.db)).rows[0]!.t;
      const sub = await load({ url: s.url, path: '/api/v2/run-code/', keys: s.keys, body: { code: HELLO_PY, compiler: PYTHON }, connections: 4, amount: JOBS });
      const accepted = Object.entries(sub.statuses).filter(([k]) => k.startsWith('2')).reduce((n, [, v]) => n + v, 0);
      if (accepted !== JOBS) throw new Error(`only ${accepted} of ${JOBS} submissions accepted: ${JSON.stringify(sub.statuses)}`);
      await s.startRunner();
      for (;;) {
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM submissions WHERE state IN ('queued', 'running')`.execute(s.db.db);
        if (rows[0]!.n === 0) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      await s.stopRunner();
      const bad = await unsuccessful(s.db.db);
      if (bad > 0) throw new Error(`${bad} submissions did not succeed`);
      const { rows } = await sql<{ seconds: number }>`SELECT extract(epoch FROM max(finished_at) - min(finished_at))::float8 AS seconds FROM submissions WHERE created_at >= ${since}`.execute(s.db.db);
      runnerRates.push((JOBS - 1) / rows[0]!.seconds);
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const runner = mean(runnerRates);
    const bare = mean(bareRates);
    const result = {
      date: new Date().toISOString(),
      jobsPerRound: JOBS,
      rounds: ROUNDS,
      slots,
      launcher: s.launcher(),
      runnerRunsPerSecond: runnerRates.map((r) => +r.toFixed(2)),
      bareRunsPerSecond: bareRates.map((r) => +r.toFixed(2)),
      ratio: +(runner / bare).toFixed(2),
      loadAverage: { before: loadBefore, after: loadAverage() },
    };
    console.error(`throughput: written to ${writeResult('throughput', result)}`);
    return {
      result,
      rows: [
        row({ benchmark: 'throughput', figure: `python hello runs finished, ${slots} slots busy (${s.launcher()})`, unit: 'runs/s', value: runner, baseline: bare, baselineIs: `bare interpreter, ${slots} at a time`, target: `≥ ${TARGET_RATIO * 100}% of bare`, met: runner / bare >= TARGET_RATIO }),
      ],
    };
  } finally {
    await s.close();
  }
}

runIfMain(import.meta.url, benchThroughput);
