import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createAccount, setAccountLimits } from '../../src/accounts/accounts.js';
import type { KeyCache } from '../../src/accounts/key-cache.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { createApp } from '../../src/api/app.js';
import { compilerEntry } from '../../src/compilers/catalogue.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Db } from '../../src/db/connect.js';
import type { PlanLimits } from '../../src/limits.js';
import type { Clock } from '../../src/util/clock.js';

// Test fixtures for the API: a clock the test moves, an images directory with
// manifests for chosen compilers (what the availability check reads), accounts and
// keys, and the API itself on an ephemeral 127.0.0.1 port.

export class TestClock implements Clock {
  constructor(public current: Date = new Date()) {}
  now(): Date {
    return new Date(this.current);
  }
  advanceMs(ms: number): void {
    this.current = new Date(this.current.getTime() + ms);
  }
  set(iso: string): void {
    this.current = new Date(iso);
  }
}

export interface FakeImages {
  dir: string;
  remove(): void;
}

/** An images directory where exactly these compilers count as installed. */
export function fakeImagesDir(compilers: string[]): FakeImages {
  const dir = mkdtempSync(join(tmpdir(), 'runbox-api-images-'));
  const byImage = new Map<string, Record<string, { version: string; libraries?: Record<string, string> }>>();
  for (const id of compilers) {
    const entry = compilerEntry(id);
    if (!entry) throw new Error(`no recipe serves ${id}`);
    const list = byImage.get(entry.image) ?? {};
    // As a build records them: the recipe's stated versions, which the build checks.
    const libraries = entry.libraries ? Object.fromEntries(Object.entries(entry.libraries).map(([name, l]) => [name, l.version])) : undefined;
    list[id] = { version: entry.version, ...(libraries ? { libraries } : {}) };
    byImage.set(entry.image, list);
  }
  for (const [image, list] of byImage) {
    mkdirSync(join(dir, image, 'rootfs'), { recursive: true });
    const manifest = { image, suite: 'bullseye', recipeHash: 'test', digest: 'test', builtAt: new Date().toISOString(), compilers: list };
    writeFileSync(join(dir, image, 'manifest.json'), JSON.stringify(manifest));
  }
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function testConfig(databaseUrl: string, imagesDir: string, extra: Record<string, string> = {}): Config {
  // Every test signs up from 127.0.0.1: far more than the default allowance of one address.
  return loadConfig({ ...process.env, RUNBOX_DATABASE_URL: databaseUrl, RUNBOX_IMAGES_DIR: imagesDir, RUNBOX_PORT: '0', RUNBOX_SIGNUPS_PER_HOUR: '1000', ...extra });
}

export interface TestApi {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startTestApi(opts: { db: Db; config: Config; clock: Clock; maintenanceCacheMs?: number; keys?: KeyCache }): Promise<TestApi> {
  const errors: unknown[] = [];
  const app = createApp({ ...opts, maintenanceCacheMs: opts.maintenanceCacheMs ?? 0, log: { error: (obj) => errors.push(obj) } });
  const server = createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let accountSeq = 0;

/** An account (with optional overrides of the Free plan) and one key. */
export async function accountWithKey(
  db: Db,
  opts: { limits?: Partial<PlanLimits>; keyMonthlyLimit?: number | null } = {},
): Promise<{ accountId: string; key: CreatedKey }> {
  const account = await createAccount(db, `user${++accountSeq}-${process.pid}-${Date.now()}@example.com`);
  if (opts.limits) await setAccountLimits(db, account.id, opts.limits);
  const key = await createKey(db, {
    accountId: account.id,
    appName: 'test app',
    redirectUrl: 'http://127.0.0.1:9/callback',
    monthlyLimit: opts.keyMonthlyLimit ?? null,
  });
  return { accountId: account.id, key };
}

export async function postRun(base: string, key: string | undefined, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${base}/api/v2/run-code/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(key !== undefined ? { Authorization: key } : {}), ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? (body as string) : JSON.stringify(body),
  });
}

/** Every counter admission moves, for asserting that a refused request moved none. */
export async function counters(db: Db, accountId: string): Promise<{ submissions: number; accountUsage: number; keyUsage: number }> {
  const { rows } = await sql<{ submissions: number; account_usage: number; key_usage: number }>`
    SELECT (SELECT count(*) FROM submissions WHERE account_id = ${accountId})::int AS submissions,
           (SELECT coalesce(sum(submissions), 0) FROM account_usage WHERE account_id = ${accountId})::int AS account_usage,
           (SELECT coalesce(sum(ku.submissions), 0) FROM key_usage ku JOIN api_keys k ON k.id = ku.key_id
             WHERE k.account_id = ${accountId})::int AS key_usage
  `.execute(db);
  const r = rows[0]!;
  return { submissions: r.submissions, accountUsage: r.account_usage, keyUsage: r.key_usage };
}

export async function errorOf(res: Response): Promise<{ code: string; message: string }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  return body.error;
}
