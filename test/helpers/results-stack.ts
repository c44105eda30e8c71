import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { createAccount, setAccountLimits } from '../../src/accounts/accounts.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { expect } from 'chai';
import { startApi, type RunningApi } from '../../src/api/server.js';
import { loadConfig } from '../../src/config.js';
import type { KeyKind } from '../../src/db/schema.js';
import type { PlanLimits } from '../../src/limits.js';
import type { RunResult } from '../../src/result.js';
import { startRunner, type Runner, type RunnerOptions } from '../../src/runner/daemon.js';
import { createSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxSpec } from '../../src/sandbox/spec.js';
import { systemClock } from '../../src/util/clock.js';
import { testConfig } from './api.js';
import { freshDatabase, type TestDatabase } from './db.js';
import { imageRootfs } from './sandbox.js';

// The whole path of a run for the result suites: a fresh database, the real API
// (startApi: HTTP, WebSocket, run-end watcher) on 127.0.0.1, and a real runner with
// the real sandbox and the installed images.

export const silentLog = pino({ level: 'silent' });

export interface ResultsStack {
  db: TestDatabase;
  api: RunningApi;
  url: string;
  env: Record<string, string>;
  runner?: Runner;
  startRunner(extra?: Partial<RunnerOptions> & { env?: Record<string, string> }): Promise<Runner>;
  close(): Promise<void>;
}

/** Why the real-run suites cannot run here, or null. */
export function realRunsUnavailable(images: string[]): string | null {
  if (process.getuid?.() !== 0) return 'real runs need root (cgroups, per-slot uids)';
  for (const image of images) {
    const found = imageRootfs(image);
    if ('skip' in found) return found.skip;
  }
  return null;
}

/** Skips the test or hook `ctx` (saying why) when real runs of `images` cannot be had here. */
export function skipUnlessRealRuns(ctx: Mocha.Context, images: string[]): void {
  const why = realRunsUnavailable(images);
  if (why) {
    console.log(`      SKIPPED: ${why}`);
    ctx.skip();
  }
}

export async function resultsStack(label: string, env: Record<string, string> = {}): Promise<ResultsStack> {
  const db = await freshDatabase(label);
  // Stored problems' test data cached in a directory of the stack's own, not the host's.
  const dataCache = mkdtempSync(join(tmpdir(), 'runbox-test-data-'));
  const base = {
    RUNBOX_DATA_CACHE_DIR: dataCache,
    RUNBOX_POLL_MS: '200',
    RUNBOX_RUNNER_SLOTS: '2',
    // A uid range of its own, apart from the other suites' runners.
    RUNBOX_SANDBOX_UID_BASE: String(64000 + (process.pid % 100) * 20),
    ...env,
  };
  const config = testConfig(db.url, loadConfig().RUNBOX_IMAGES_DIR, base);
  const api = await startApi({ db: db.db, config, clock: systemClock, maintenanceCacheMs: 0, log: { error: () => {} } });
  const runners: Runner[] = [];
  let sandbox: Sandbox | undefined;
  const stack: ResultsStack = {
    db,
    api,
    url: `http://127.0.0.1:${api.port}`,
    env: base,
    startRunner: async (extra = {}) => {
      const { env: more, ...opts } = extra;
      const cfg = more ? testConfig(db.url, config.RUNBOX_IMAGES_DIR, { ...base, ...more }) : config;
      sandbox ??= await createSandbox(cfg);
      const r = await startRunner({ db: db.db, config: cfg, sandbox, log: silentLog, drainMs: 40_000, ...opts });
      runners.push(r);
      stack.runner ??= r;
      return r;
    },
    close: async () => {
      await Promise.all(runners.map((r) => r.stop()));
      await api.close();
      await db.drop();
      rmSync(dataCache, { recursive: true, force: true });
    },
  };
  return stack;
}

let seq = 0;

export async function keyFor(
  db: TestDatabase,
  opts: {
    limits?: Partial<PlanLimits>;
    kind?: KeyKind;
    monthlyLimit?: number | null;
    redirectUrl?: string | null;
    allowedOrigins?: string[];
    student?: boolean;
  } = {},
): Promise<{ accountId: string; key: CreatedKey }> {
  const account = await createAccount(db.db, `results-${process.pid}-${++seq}-${Date.now()}@example.com`);
  if (opts.limits) await setAccountLimits(db.db, account.id, opts.limits);
  const key = await createKey(db.db, {
    accountId: account.id,
    appName: 'results',
    kind: opts.kind ?? 'api',
    redirectUrl: opts.redirectUrl ?? null,
    monthlyLimit: opts.monthlyLimit ?? null,
    allowedOrigins: opts.allowedOrigins ?? [],
    student: opts.student ?? false,
  });
  return { accountId: account.id, key };
}

export async function postJson(url: string, key: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: key },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/** A synchronous run through the stack's API; fails the test (with the answer) unless it is a 200. */
export async function syncRun(s: ResultsStack, key: string, body: unknown): Promise<RunResult> {
  const res = await postJson(`${s.url}/api/v2/run-code-sync/`, key, body);
  const text = await res.text();
  expect(res.status, text).to.equal(200);
  return JSON.parse(text) as RunResult;
}

/** Submissions billed to the account (its usage row, whatever the month). */
export async function billedSubmissions(s: ResultsStack, accountId: string): Promise<number> {
  return (await s.db.db.selectFrom('account_usage').select('submissions').where('account_id', '=', accountId).executeTakeFirst())?.submissions ?? 0;
}

/** The real sandbox, each stage it is asked to run recorded in `stages` first (for a runner: startRunner({ sandbox })). */
export async function recordingSandbox(stages: SandboxSpec[]): Promise<Sandbox> {
  const real = await createSandbox(loadConfig());
  return {
    launcher: real.launcher,
    run: (spec) => {
      stages.push(spec);
      return real.run(spec);
    },
    close: () => real.close!(),
  };
}
