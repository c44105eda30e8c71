import { writeFileSync } from 'node:fs';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { benchAcks } from './acks.js';
import { benchEval } from './eval.js';
import { benchFleet } from './fleet.js';
import { benchFloor } from './floor.js';
import { benchJudge } from './judge.js';
import { benchPeers } from './peers.js';
import { loadAverage, markdownTable, QUICK, resultsDir, row, type BenchOutcome, type Row } from './common.js';
import { benchLatency } from './latency.js';
import { benchQueue } from './queue.js';
import { benchSandbox } from './sandbox.js';
import { benchThroughput } from './throughput.js';
import { benchWidget } from './widget.js';
import { benchYear } from './year.js';

// `npm run bench`: every benchmark in sequence, one combined bench/results/<date>.json
// and a markdown table (for docs/benchmarks.md). RUNBOX_BENCH_ONLY=sandbox,latency selects;
// RUNBOX_BENCH_QUICK=1 is a short smoke run. A benchmark that fails is recorded and
// the others still run; the exit code then says so.

const COMPILER_TARGET_ADDED_MS = 15;

interface CompilerStage {
  bare: { median: number };
  sandbox: { median: number };
  addedMedian: number;
}

/** The compiler benchmark is its own module; its result becomes rows here. */
async function benchCompilersRows(): Promise<BenchOutcome> {
  if (QUICK) {
    process.env.RUNBOX_BENCH_COMPILERS ??= 'gcc-4.9,python-3.9.7';
    process.env.RUNBOX_BENCH_ROUNDS ??= '2';
    process.env.RUNBOX_BENCH_SLOW_ROUNDS ??= '2';
  }
  // Imported here, after the environment above is set: the module reads it on load.
  const { benchCompilers } = await import('./compilers.js');
  const result = await benchCompilers();
  const rows: Row[] = [];
  for (const [id, entry] of Object.entries(result.compilers as Record<string, Record<string, unknown>>)) {
    for (const stage of ['compile', 'run'] as const) {
      const s = entry[stage] as CompilerStage | undefined;
      if (!s) continue;
      rows.push(
        row({
          benchmark: 'compilers',
          figure: `${id} ${stage}, median`,
          unit: 'ms',
          value: s.sandbox.median,
          baseline: s.bare.median,
          baselineIs: 'bare in the image',
          target: `≤ +${COMPILER_TARGET_ADDED_MS} ms (${s.addedMedian >= 0 ? '+' : ''}${s.addedMedian.toFixed(0)})`,
          met: s.addedMedian <= COMPILER_TARGET_ADDED_MS,
        }),
      );
    }
  }
  return { result, rows };
}

const BENCHMARKS: Record<string, () => Promise<BenchOutcome>> = {
  sandbox: benchSandbox,
  floor: benchFloor,
  judge: benchJudge,
  peers: benchPeers,
  latency: benchLatency,
  throughput: benchThroughput,
  eval: benchEval,
  acks: benchAcks,
  queue: benchQueue,
  fleet: benchFleet,
  compilers: benchCompilersRows,
  widget: benchWidget,
  year: benchYear,
};

async function main(): Promise<number> {
  const only = process.env.RUNBOX_BENCH_ONLY?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((n) => !(n in BENCHMARKS)) ?? [];
  if (unknown.length > 0) {
    console.error(`unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`);
    return 2;
  }
  const started = new Date();
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: +(totalmem() / 2 ** 30).toFixed(1),
    kernel: release(),
    node: process.version,
    loadAverageAtStart: loadAverage(),
    // Which launcher the runner of the end-to-end and throughput benchmarks uses.
    launcherSetting: process.env.RUNBOX_LAUNCHER ?? 'auto',
    nsjail: process.env.RUNBOX_NSJAIL ?? '(PATH)',
  };
  const results: Record<string, unknown> = {};
  const rows: Row[] = [];
  const failed: string[] = [];
  for (const [name, fn] of Object.entries(BENCHMARKS)) {
    if (only && !only.includes(name)) continue;
    console.error(`== ${name} (load average ${loadAverage()})`);
    const t0 = performance.now();
    try {
      const o = await fn();
      results[name] = { seconds: +((performance.now() - t0) / 1000).toFixed(1), ...o.result };
      rows.push(...o.rows);
    } catch (err) {
      console.error(`${name} failed:`, err);
      results[name] = { error: (err as Error).stack ?? String(err) };
      failed.push(name);
    }
  }
  const loadAverageAtEnd = loadAverage();
  const combined = {
    date: started.toISOString(),
    quick: QUICK,
    machine: { ...machine, loadAverageAtEnd },
    seconds: +((Date.now() - started.getTime()) / 1000).toFixed(0),
    table: rows,
    results,
  };
  // A selection (RUNBOX_BENCH_ONLY) leaves the day's combined file to the full run: each
  // benchmark has written its own file already.
  const file = only ? undefined : join(resultsDir(), `${started.toISOString().slice(0, 10)}${QUICK ? '-quick' : ''}.json`);
  if (file) writeFileSync(file, JSON.stringify(combined, null, 2) + '\n');

  console.log(`Measured ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC${QUICK ? ' (quick run)' : ''} on ${machine.cpus} × ${machine.cpuModel}, Linux ${machine.kernel}, ` +
    `load average ${machine.loadAverageAtStart} at the start and ${loadAverageAtEnd} at the end; ${combined.seconds} s in all.\n`);
  console.log(markdownTable(rows));
  if (failed.length > 0) console.log(`\nfailed: ${failed.join(', ')}`);
  if (file) console.log(`\nwritten to ${file}`);
  return failed.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
