import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome } from './common.js';
import { bareHello, benchStack, unsuccessful, HELLO_PY, imageRootfs, load, PYTHON, type ApiMode } from './stack.js';

// End-to-end latency of one synchronous run, one request at a time: POST
// /api/v2/run-code-sync/ with a python hello world (API process, admission, queue,
// runner, sandbox, result back through NOTIFY) against the same hello world run by the
// bare interpreter (chroot into the same image). Blocks of each alternate so that both
// see the same machine load.

const REQUESTS = Number(process.env.RUNBOX_BENCH_REQUESTS ?? (QUICK ? 20 : 200));
const BLOCKS = QUICK ? 2 : 10;
const TARGET_P50_MS = 40;
const TARGET_RATIO = 3.5;

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

    const e = stats(e2e);
    const b = stats(bare);
    const ratio = +(e.median / b.median).toFixed(2);
    const launcher = s.launcher();
    const result = { date: new Date().toISOString(), api, launcher, requests: e2e.length, statuses, endToEndMs: e, bareInterpreterMs: b, p50Ratio: ratio, loadAverage: { before: loadBefore, after: loadAverage() } };
    console.error(`latency: written to ${writeResult('latency', result)}`);
    return {
      result,
      rows: [
        row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${launcher}), p50`, unit: 'ms', value: e.median, baseline: b.median, baselineIs: 'bare interpreter', target: `≤ ${TARGET_P50_MS} ms and ≤ ${TARGET_RATIO}×`, met: e.median <= TARGET_P50_MS && ratio <= TARGET_RATIO }),
        row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${launcher}), p95`, unit: 'ms', value: e.p95, baseline: b.p95, baselineIs: 'bare interpreter', target: 'report', met: null }),
        row({ benchmark: 'end-to-end', figure: `run-code-sync python hello (${launcher}), p99`, unit: 'ms', value: e.p99, baseline: b.p99, baselineIs: 'bare interpreter', target: 'report', met: null }),
      ],
    };
  } finally {
    await s.close();
  }
}

runIfMain(import.meta.url, benchLatency);
