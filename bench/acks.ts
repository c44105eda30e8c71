import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { connect } from '../src/db/connect.js';
import { admitSubmission } from '../src/quota/admit.js';
import { PROJECT_ROOT } from '../src/util/paths.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';
import { countStatements, postgresCpu, postgresCpuDelta, procCpu } from './cpu.js';
import { benchStack, HELLO_PY, load, PYTHON, type ApiMode, type BenchStack, type LoadRun } from './stack.js';

// Acknowledgements: POST /api/v2/run-code/ as fast as the API answers, keys of many
// accounts in rotation (their plan is high, so no per-account limit bites), no runner
// (jobs stay queued). Baseline: a bare node:http server in its own process that reads
// the body and answers the same 200 "Ok", under the same load generator and
// connections, alternating with the API. What bounds it is measured too: the
// admission alone (admitSubmission, the same account-locked transaction the API runs)
// called straight from this process, as many at once as there are connections, on a
// pool as large as the API's: no HTTP, no authentication. The full run also measures the API inside
// this process (sharing the load generator's event loop), which is why the figures
// come from the API in its own process.

const ACCOUNTS = 200;
const CONNECTIONS = 32;
const SECONDS = QUICK ? 3 : 8;
const ROUNDS = QUICK ? 1 : 2;
const TARGET_RATIO = 0.1;
const TARGET_P99_MS = 50;
const TARGET_ROUND_TRIPS = 2;
const SEQUENTIAL_ACKS = QUICK ? 50 : 300;
const PATH = '/api/v2/run-code/';

async function spawnBareServer(): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/bench/bare-server.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    createInterface({ input: child.stdout }).once('line', (line) => resolve((JSON.parse(line) as { listening: { port: number } }).listening.port));
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function merge(runs: LoadRun[]): { perSecond: number; latency: ReturnType<typeof stats>; statuses: Record<string, number>; errors: number } {
  const statuses: Record<string, number> = {};
  for (const r of runs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const seconds = runs.reduce((a, r) => a + r.seconds, 0);
  const n = runs.reduce((a, r) => a + r.latencies.length, 0);
  return { perSecond: n / seconds, latency: stats(runs.flatMap((r) => r.latencies)), statuses, errors: runs.reduce((a, r) => a + r.errors, 0) };
}

/**
 * Admissions per second with no HTTP in front: the database's share of an
 * acknowledgement. A pool of its own, as large as the API's, opened after the API has
 * stopped, so that the shared Postgres never holds both at once.
 */
async function admissionsAlone(s: BenchStack, seconds: number, opts: { flushAtCommit: boolean }): Promise<{ perSecond: number; latency: ReturnType<typeof stats> }> {
  const url = new URL(s.db.url);
  // Not how runbox runs (an acknowledged job must survive a crash): shows what the WAL flush costs.
  if (!opts.flushAtCommit) url.searchParams.set('options', '-c synchronous_commit=off');
  const pool = connect(url.toString(), { max: 20, applicationName: 'runbox-bench' });
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  let next = 0;
  const t0 = performance.now();
  try {
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < end) {
          const owner = s.owners[next++ % s.owners.length]!;
          const t1 = performance.now();
          const a = await admitSubmission(pool.db, {
            accountId: owner.accountId,
            keyId: owner.keyId,
            compiler: PYTHON,
            code: HELLO_PY,
            input: null,
            tests: null,
            extraParams: null,
            mode: 'async',
            maxAttempts: s.config.RUNBOX_MAX_ATTEMPTS,
            now: new Date(),
          });
          if (!a.admitted) throw new Error(`admission refused: ${a.reason}`);
          latencies.push(performance.now() - t1);
        }
      }),
    );
  } finally {
    await pool.close();
  }
  return { perSecond: latencies.length / ((performance.now() - t0) / 1000), latency: stats(latencies) };
}

/**
 * Statements sent per acknowledgement by the API in this process (node-pg sends one
 * statement per round trip) and write commits per acknowledgement, in steady state
 * (the clients' keys already cached): one request at a time, and with every
 * connection busy, where admissions share a batch.
 */
async function countRoundTrips(s: BenchStack): Promise<{ sequential: number; concurrent: number; sequentialCommits: number; concurrentCommits: number }> {
  const body = { code: HELLO_PY, compiler: PYTHON };
  const keys = s.keys.slice(0, CONNECTIONS);
  await load({ url: s.url, path: PATH, keys, body, connections: 1, amount: keys.length });
  const counter = countStatements();
  try {
    const one = await load({ url: s.url, path: PATH, keys, body, connections: 1, amount: SEQUENTIAL_ACKS });
    const sequential = counter.count() / one.latencies.length;
    const sequentialCommits = counter.commits() / one.latencies.length;
    const [n0, c0] = [counter.count(), counter.commits()];
    const many = await load({ url: s.url, path: PATH, keys, body, connections: CONNECTIONS, amount: SEQUENTIAL_ACKS * 4 });
    const concurrent = (counter.count() - n0) / many.latencies.length;
    const concurrentCommits = (counter.commits() - c0) / many.latencies.length;
    return { sequential, concurrent, sequentialCommits, concurrentCommits };
  } finally {
    counter.stop();
  }
}

async function measure(api: ApiMode, rounds: number, boundsToo: boolean) {
  const s = await benchStack(`bench_acks_${api}`, { accounts: ACCOUNTS, api });
  const bare = await spawnBareServer();
  try {
    const body = { code: HELLO_PY, compiler: PYTHON };
    const opts = { path: PATH, keys: s.keys, body, connections: CONNECTIONS };
    // Warm-up: connections, JIT, the database's caches.
    await load({ ...opts, url: s.url, duration: 1 });
    await load({ ...opts, url: bare.url, duration: 1 });
    const apiRuns: LoadRun[] = [];
    const bareRuns: LoadRun[] = [];
    // CPU ms per request of each server process, the database's backends, and commits.
    const work = { apiMs: 0, bareMs: 0, postgresMs: 0 };
    for (let i = 0; i < rounds; i++) {
      const b0 = procCpu(bare.pid).selfMs;
      bareRuns.push(await load({ ...opts, url: bare.url, duration: SECONDS }));
      work.bareMs += procCpu(bare.pid).selfMs - b0;
      const a0 = s.apiPid ? procCpu(s.apiPid).selfMs : procCpu('self').selfMs;
      const pg0 = await postgresCpu(s.db.db);
      apiRuns.push(await load({ ...opts, url: s.url, duration: SECONDS }));
      work.apiMs += (s.apiPid ? procCpu(s.apiPid).selfMs : procCpu('self').selfMs) - a0;
      work.postgresMs += postgresCpuDelta(pg0, await postgresCpu(s.db.db));
    }
    const a = merge(apiRuns);
    if (Object.keys(a.statuses).some((k) => k !== '200') || a.errors > 0) throw new Error(`API answered ${JSON.stringify(a.statuses)}, ${a.errors} errors`);
    const acks = apiRuns.reduce((n, r) => n + r.latencies.length, 0);
    const bareRequests = bareRuns.reduce((n, r) => n + r.latencies.length, 0);
    const perAck = { apiCpuMs: work.apiMs / acks, bareCpuMs: work.bareMs / bareRequests, postgresCpuMs: work.postgresMs / acks };
    // Round trips: only countable here when the API runs in this process.
    const roundTrips = api === 'inprocess' ? await countRoundTrips(s) : undefined;
    await s.stopApi();
    if (!boundsToo) return { api: a, bare: merge(bareRuns), perAck, roundTrips };
    const admission = await admissionsAlone(s, SECONDS, { flushAtCommit: true });
    const withoutFlush = await admissionsAlone(s, SECONDS, { flushAtCommit: false });
    return { api: a, bare: merge(bareRuns), perAck, roundTrips, admission, withoutFlush };
  } finally {
    await bare.stop();
    await s.close();
  }
}

export async function benchAcks(): Promise<BenchOutcome> {
  const loadBefore = loadAverage();
  const child = await measure('process', ROUNDS, true);
  if (!child.admission || !child.withoutFlush) throw new Error('admission figures missing');
  const { admission, withoutFlush } = child;
  const inProcess = await measure('inprocess', 1, false);
  const { api, bare } = child;
  const result = {
    date: new Date().toISOString(),
    accounts: ACCOUNTS,
    connections: CONNECTIONS,
    secondsPerRound: SECONDS,
    rounds: ROUNDS,
    apiProcess: { perSecond: Math.round(api.perSecond), latencyMs: api.latency, statuses: api.statuses },
    bareServer: { perSecond: Math.round(bare.perSecond), latencyMs: bare.latency },
    admissionAlone: { perSecond: Math.round(admission.perSecond), latencyMsLastRound: admission.latency },
    admissionAloneWithoutCommitFlush: { perSecond: Math.round(withoutFlush.perSecond), latencyMs: withoutFlush.latency },
    perAck: child.perAck,
    roundTripsPerAck: inProcess.roundTrips,
    apiInThisProcess: { perSecond: Math.round(inProcess.api.perSecond), latencyMs: inProcess.api.latency },
    loadAverage: { before: loadBefore, after: loadAverage() },
  };
  console.error(`acks: written to ${writeResult('acks', result)}`);
  const rows: Row[] = [
    row({ benchmark: 'API acks', figure: `run-code acknowledged, ${ACCOUNTS} accounts, ${CONNECTIONS} connections`, unit: 'req/s', value: api.perSecond, baseline: bare.perSecond, baselineIs: 'bare node:http', target: `≥ ${TARGET_RATIO}×`, met: api.perSecond / bare.perSecond >= TARGET_RATIO }),
    row({ benchmark: 'API acks', figure: 'run-code p50', unit: 'ms', value: api.latency.median, baseline: bare.latency.median, baselineIs: 'bare node:http', target: 'report', met: null }),
    row({ benchmark: 'API acks', figure: 'run-code p99', unit: 'ms', value: api.latency.p99, baseline: bare.latency.p99, baselineIs: 'bare node:http', target: `< ${TARGET_P99_MS} ms`, met: api.latency.p99 < TARGET_P99_MS }),
  ];
  const { perAck, roundTrips } = { perAck: child.perAck, roundTrips: inProcess.roundTrips };
  rows.push(row({ benchmark: 'API acks', figure: 'CPU per ack: API process', unit: 'ms', value: perAck.apiCpuMs, baseline: perAck.bareCpuMs, baselineIs: 'bare node:http per request', target: 'report', met: null }));
  rows.push(row({ benchmark: 'API acks', figure: 'CPU per ack: Postgres backends', unit: 'ms', value: perAck.postgresCpuMs, baseline: null, baselineIs: '', target: 'report', met: null }));
  if (roundTrips) {
    rows.push(row({ benchmark: 'API acks', figure: 'round trips per ack, one request at a time (steady state)', unit: '', value: roundTrips.sequential, baseline: null, baselineIs: '', target: `≤ ${TARGET_ROUND_TRIPS}`, met: roundTrips.sequential <= TARGET_ROUND_TRIPS }));
    rows.push(row({ benchmark: 'API acks', figure: 'commits per ack, one request at a time', unit: '', value: roundTrips.sequentialCommits, baseline: null, baselineIs: '', target: 'report', met: null }));
    rows.push(row({ benchmark: 'API acks', figure: `round trips per ack, ${CONNECTIONS} connections (batched)`, unit: '', value: roundTrips.concurrent, baseline: null, baselineIs: '', target: '≤ 1', met: roundTrips.concurrent <= 1 }));
    rows.push(row({ benchmark: 'API acks', figure: `commits per ack, ${CONNECTIONS} connections (group commit)`, unit: '', value: roundTrips.concurrentCommits, baseline: null, baselineIs: '', target: 'report', met: null }));
  }
  rows.push(row({ benchmark: 'API acks', figure: 'admission transaction alone (no HTTP), what bounds the above', unit: 'adm/s', value: admission.perSecond, baseline: api.perSecond, baselineIs: 'the API above', target: 'report', met: null }));
  rows.push(row({ benchmark: 'API acks', figure: 'admission alone, commit not waiting for the WAL flush (not used)', unit: 'adm/s', value: withoutFlush.perSecond, baseline: admission.perSecond, baselineIs: 'admission alone', target: 'report', met: null }));
  rows.push(row({ benchmark: 'API acks', figure: 'same, API in the load generator\'s process', unit: 'req/s', value: inProcess.api.perSecond, baseline: inProcess.bare.perSecond, baselineIs: 'bare node:http', target: 'report', met: null }));
  return { result, rows };
}

runIfMain(import.meta.url, benchAcks);
