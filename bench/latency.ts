import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compilerEntry } from '../src/compilers/catalogue.js';
import { planProgram } from '../src/program/plan.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';
import { buildHarness, floor } from './floor.js';
import { bareHello, benchStack, unsuccessful, HELLO_PY, imageRootfs, load, PYTHON, type ApiMode } from './stack.js';

// End-to-end latency of one synchronous run, one request at a time: POST
// /api/v2/run-code-sync/ with a python hello world (API process, admission, queue,
// runner, sandbox, result back through NOTIFY) against the same hello world run by the
// bare interpreter (chroot into the same image). Blocks of each alternate so that both
// see the same machine load. Beside it, the physical floor (bench/floor.ts: the program
// exec'd directly in its image by a minimal native harness) for the python hello world,
// and for a C hello world's compile and run (gcc-4.9), whose synchronous requests are
// measured the same way.

const REQUESTS = Number(process.env.RUNBOX_BENCH_REQUESTS ?? (QUICK ? 20 : 200));
const BLOCKS = QUICK ? 2 : 10;
const TARGET_P50_MS = 40;
const TARGET_RATIO = 3.5;
/** Pooled sandboxes: a synchronous run's p50 over the floor's median. */
const TARGET_OVER_FLOOR_PY_MS = 5;
const TARGET_OVER_FLOOR_C_MS = 10;
const C_COMPILER = 'gcc-4.9';

export async function benchLatency(): Promise<BenchOutcome> {
  const api: ApiMode = process.env.RUNBOX_BENCH_API === 'inprocess' ? 'inprocess' : 'process';
  const s = await benchStack('bench_latency', { accounts: 4, api });
  const loadBefore = loadAverage();
  try {
    await s.startRunner();
    const rootfs = imageRootfs(s.config, 'python3.9');
    const body = { code: HELLO_PY, compiler: PYTHON };
    const path = '/api/v2/run-code-sync/';
    // Warm-up: first runs pay for page cache, JIT and connection set-up.
    await load({ url: s.url, path, keys: s.keys, body, connections: 1, amount: 5 });
    for (let i = 0; i < 5; i++) await bareHello(rootfs);

    const e2e: number[] = [];
    const bare: number[] = [];
    const statuses: Record<string, number> = {};
    const per = Math.ceil(REQUESTS / BLOCKS);
    for (let b = 0; b < BLOCKS; b++) {
      const r = await load({ url: s.url, path, keys: s.keys, body, connections: 1, amount: per });
      e2e.push(...r.latencies);
      for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
      if (r.errors > 0) throw new Error(`${r.errors} requests failed or timed out`);
      for (let i = 0; i < per; i++) {
        const t0 = performance.now();
        await bareHello(rootfs);
        bare.push(performance.now() - t0);
      }
    }
    if (Object.keys(statuses).some((k) => k !== '200')) throw new Error(`unexpected statuses: ${JSON.stringify(statuses)}`);
    // Each run must really have run: every submission finished with the hello output.
    const bad = await unsuccessful(s.db.db);
    if (bad > 0) throw new Error(`${bad} submissions did not succeed`);

    // The floor, one after another: python, then C's compile and run (each pair's sum).
    const harness = buildHarness();
    const floorPy: number[] = [];
    const e2eC: number[] = [];
    const floorC: number[] = [];
    const gcc = compilerEntry(C_COMPILER);
    if (!gcc?.compile) throw new Error(`no ${C_COMPILER} recipe`);
    const cRoot = imageRootfs(s.config, gcc.image);
    const dir = mkdtempSync('/dev/shm/runbox-bench-latency-');
    try {
      const plan = planProgram(gcc, { code: gcc.hello.code });
      writeFileSync(join(dir, plan.main), gcc.hello.code);
      const compileArgv = plan.compile!.argv;
      const runArgv = plan.run.argv;
      const cBody = { code: gcc.hello.code, compiler: C_COMPILER };
      const perC = Math.max(2, Math.ceil(per / 2));
      await load({ url: s.url, path, keys: s.keys, body: cBody, connections: 1, amount: 3 });
      await floor(harness, cRoot, 2, 1, compileArgv, [dir, '/tmp']);
      for (let b = 0; b < BLOCKS; b++) {
        floorPy.push(...(await floor(harness, rootfs, per, 1, ['/usr/bin/python3.9', '-c', HELLO_PY], undefined)).tookMs);
        const r = await load({ url: s.url, path, keys: s.keys, body: cBody, connections: 1, amount: perC });
        if (r.errors > 0 || Object.keys(r.statuses).some((k) => k !== '200')) throw new Error(`C requests failed: ${JSON.stringify(r.statuses)}`);
        e2eC.push(...r.latencies);
        const compiled = await floor(harness, cRoot, perC, 1, compileArgv, [dir, '/tmp']);
        const ran = await floor(harness, cRoot, perC, 1, runArgv, [dir, '/tmp']);
        compiled.tookMs.forEach((t, i) => floorC.push(t + (ran.tookMs[i] ?? 0)));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(join(harness, '..'), { recursive: true, force: true });
    }
    const badAfter = await unsuccessful(s.db.db);
    if (badAfter > 0) throw new Error(`${badAfter} submissions did not succeed`);
    const fp = stats(floorPy);
    const ec = stats(e2eC);
    const fc = stats(floorC);
    const floorRows: Row[] = [
      row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${s.launcher()}), p50, against the floor`, unit: 'ms', value: stats(e2e).median, baseline: fp.median, baselineIs: "exec'd in its image", target: `≤ floor + ${TARGET_OVER_FLOOR_PY_MS} ms (+${(stats(e2e).median - fp.median).toFixed(1)})`, met: stats(e2e).median <= fp.median + TARGET_OVER_FLOOR_PY_MS }),
      row({ benchmark: 'end-to-end', figure: `run-code-sync C hello, compile + run (${s.launcher()}), p50, against the floor`, unit: 'ms', value: ec.median, baseline: fc.median, baselineIs: "compile and run exec'd in the image", target: `≤ floor + ${TARGET_OVER_FLOOR_C_MS} ms (+${(ec.median - fc.median).toFixed(1)})`, met: ec.median <= fc.median + TARGET_OVER_FLOOR_C_MS }),
    ];

    const e = stats(e2e);
    const b = stats(bare);
    const ratio = +(e.median / b.median).toFixed(2);
    const launcher = s.launcher();
    const result = { date: new Date().toISOString(), api, launcher, requests: e2e.length, statuses, endToEndMs: e, bareInterpreterMs: b, p50Ratio: ratio, floorPythonMs: fp, endToEndCMs: ec, floorCMs: fc, loadAverage: { before: loadBefore, after: loadAverage() } };
    console.error(`latency: written to ${writeResult('latency', result)}`);
    return {
      result,
      rows: [
        row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${launcher}), p50`, unit: 'ms', value: e.median, baseline: b.median, baselineIs: 'bare interpreter', target: `≤ ${TARGET_P50_MS} ms and ≤ ${TARGET_RATIO}×`, met: e.median <= TARGET_P50_MS && ratio <= TARGET_RATIO }),
        row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${launcher}), p95`, unit: 'ms', value: e.p95, baseline: b.p95, baselineIs: 'bare interpreter', target: 'report', met: null }),
        row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${launcher}), p99`, unit: 'ms', value: e.p99, baseline: b.p99, baselineIs: 'bare interpreter', target: 'report', met: null }),
        ...floorRows,
      ],
    };
  } finally {
    await s.close();
  }
}

runIfMain(import.meta.url, benchLatency);
