import { execFile } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import { sql } from 'kysely';
import { pino } from 'pino';
import { createAccount } from '../src/accounts/accounts.js';
import { upsertPlan } from '../src/accounts/plans.js';
import { createKey } from '../src/accounts/keys.js';
import { startApi } from '../src/api/server.js';
import { loadConfig, type Config } from '../src/config.js';
import type { Db } from '../src/db/connect.js';
import { MAX_MONTHLY_LIMIT } from '../src/limits.js';
import { startRunner, type Runner } from '../src/runner/daemon.js';
import { createSandbox } from '../src/sandbox/index.js';
import type { Sandbox } from '../src/sandbox/spec.js';
import { systemClock } from '../src/util/clock.js';
import { spawnApiProcess } from '../test/helpers/api-process.js';
import { freshDatabase, type TestDatabase } from '../test/helpers/db.js';

// The whole service for the API benchmarks, on a database of its own (never the main
// one): accounts on a plan high enough that no per-account limit bites, one key each,
// the API (its own process by default, so that the load generator in this process does
// not share its event loop), and a real runner with the real sandbox, started on demand.

const exec = promisify(execFile);
export const PYTHON = 'python-3.9.7';
export const HELLO_PY = 'print("Hello, World!")\n';
export const HELLO_OUTPUT = 'Hello, World!\n';

/** RUNBOX_BENCH_API=inprocess runs the API in this process instead of its own. */
export type ApiMode = 'process' | 'inprocess';

export interface BenchStack {
  db: TestDatabase;
  url: string;
  keys: string[];
  /** The account and key id behind each key, in the same order. */
  owners: { accountId: string; keyId: string }[];
  config: Config;
  startRunner(): Promise<Runner>;
  /** The API's own process (undefined when it runs in this one). */
  apiPid: number | undefined;
  /** The launcher the runner's sandbox uses (RUNBOX_LAUNCHER decides), once started. */
  launcher(): string | undefined;
  stopRunner(): Promise<void>;
  /** Stops the API early (its connections go back to the shared Postgres). */
  stopApi(): Promise<void>;
  close(): Promise<void>;
}

export async function benchStack(label: string, opts: { accounts: number; api?: ApiMode }): Promise<BenchStack> {
  const db = await freshDatabase(label);
  const env = {
    RUNBOX_DATABASE_URL: db.url,
    RUNBOX_POLL_MS: '1000',
    RUNBOX_HOST: '127.0.0.1',
    RUNBOX_PORT: '0',
    RUNBOX_LOG_LEVEL: 'warn',
    // A uid range apart from the test suites' runners.
    RUNBOX_SANDBOX_UID_BASE: process.env.RUNBOX_SANDBOX_UID_BASE ?? '62000',
  };
  const config = loadConfig({ ...process.env, ...env });
  try {
    const high = 2_000_000_000;
    await upsertPlan(db.db, 'bench', { monthlyLimit: MAX_MONTHLY_LIMIT, perMinute: high, pending: high, running: 1000, testsPerRequest: 10 });
    const keys: string[] = [];
    const owners: { accountId: string; keyId: string }[] = [];
    for (let i = 0; i < opts.accounts; i++) {
      const account = await createAccount(db.db, `bench-${i}@example.com`, 'bench');
      const key = await createKey(db.db, { accountId: account.id, appName: 'bench', redirectUrl: null });
      keys.push(key.key);
      owners.push({ accountId: account.id, keyId: key.id });
    }
    let url: string;
    let closeApi: () => Promise<void>;
    let apiPid: number | undefined;
    if ((opts.api ?? 'process') === 'process') {
      const p = await spawnApiProcess(env);
      url = p.url;
      closeApi = p.stop;
      apiPid = p.child.pid;
    } else {
      const api = await startApi({ db: db.db, config, clock: systemClock, log: { error: () => {} } });
      url = `http://127.0.0.1:${api.port}`;
      closeApi = api.close;
    }
    let sandbox: Sandbox | undefined;
    let runner: Runner | undefined;
    let apiStopped: Promise<void> | undefined;
    const stack: BenchStack = {
      db,
      url,
      keys,
      owners,
      config,
      apiPid,
      startRunner: async () => {
        sandbox ??= await createSandbox(config);
        runner = await startRunner({ db: db.db, config, sandbox, log: pino({ level: 'silent' }) });
        return runner;
      },
      launcher: () => sandbox?.launcher,
      stopRunner: async () => {
        await runner?.stop();
        runner = undefined;
      },
      stopApi: () => (apiStopped ??= closeApi()),
      close: async () => {
        await stack.stopRunner();
        await sandbox?.close?.();
        await stack.stopApi();
        await db.drop();
      },
    };
    return stack;
  } catch (err) {
    await db.drop();
    throw err;
  }
}

export interface LoadRun {
  /** Every response's time, ms, as autocannon measured it. */
  latencies: number[];
  statuses: Record<string, number>;
  errors: number;
  seconds: number;
  requestsPerSecond: number;
}

/**
 * POSTs `body` to `path` with autocannon, the Authorization header rotating across
 * `keys` request by request. Either `amount` requests or `duration` seconds.
 */
export async function load(opts: { url: string; path: string; keys: string[]; body: unknown; connections: number; amount?: number; duration?: number }): Promise<LoadRun> {
  let next = 0;
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  const body = JSON.stringify(opts.body);
  // Without a callback autocannon returns its event emitter, made thenable.
  const instance = autocannon({
    url: opts.url,
    connections: opts.connections,
    ...(opts.amount !== undefined ? { amount: opts.amount } : { duration: opts.duration ?? 10 }),
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: opts.path,
        headers: { 'content-type': 'application/json' },
        body,
        setupRequest: (req) => ({ ...req, headers: { ...req.headers, authorization: opts.keys[next++ % opts.keys.length]! } }),
      },
    ],
  }) as unknown as EventEmitter & PromiseLike<autocannon.Result>;
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    latencies.push(ms);
    statuses[status] = (statuses[status] ?? 0) + 1;
  });
  const t0 = performance.now();
  const res = await instance;
  const seconds = (performance.now() - t0) / 1000;
  return { latencies, statuses, errors: res.errors + res.timeouts, seconds, requestsPerSecond: latencies.length / seconds };
}

export function imageRootfs(config: Config, image: string): string {
  return join(config.RUNBOX_IMAGES_DIR, image, 'rootfs');
}

/** The bare interpreter: the same hello world, chroot into the same image, no sandbox. */
export async function bareHello(rootfs: string): Promise<void> {
  const { stdout } = await exec('/usr/sbin/chroot', [rootfs, '/usr/bin/python3.9', '-c', HELLO_PY], { env: { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' } });
  if (stdout !== HELLO_OUTPUT) throw new Error(`bare python printed ${JSON.stringify(stdout)}`);
}

/** Submissions that did not finish with the hello world's output. */
export async function unsuccessful(db: Db): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM submissions
    WHERE state <> 'finished' OR result->>'status' IS DISTINCT FROM 'success' OR result->>'output' IS DISTINCT FROM ${HELLO_OUTPUT}`.execute(db);
  return rows[0]!.n;
}
