import { expect } from 'chai';
import { sql } from 'kysely';
import type { Db } from '../../src/db/connect.js';
import type { SubmissionMode } from '../../src/db/schema.js';

// Rows the queue and runner tests create directly: accounts (with an optional
// runs-at-once override), queued submissions, and the usage counters admission would
// have moved.

export const MONTH = '2026-11';
let seq = 0;

export async function makeAccount(db: Db, opts: { running?: number } = {}): Promise<string> {
  const row = await db
    .insertInto('accounts')
    .values({ email: `a${process.pid}-${++seq}-${Date.now()}@example.com`, plan: 'free', running: opts.running ?? null })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

export async function makeKey(db: Db, accountId: string): Promise<string> {
  const row = await db
    .insertInto('api_keys')
    .values({
      account_id: accountId,
      key_hash: Buffer.from(`hash-${++seq}-${Math.random()}`),
      key_prefix: 'rbx_test',
      app_name: 'test',
      redirect_url: null,
      kind: 'api',
      signing_secret: 'secret',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return String(row.id);
}

export interface JobOpts {
  keyId?: string;
  compiler?: string;
  code?: string;
  input?: string;
  tests?: { input: string }[];
  priority?: number;
  runAt?: Date;
  createdAt?: Date;
  units?: number;
  maxAttempts?: number;
  /** How it was submitted (default 'async'): only live modes have their end notified. */
  mode?: SubmissionMode;
  /** A WebSocket run that waits on its user's input (run_options.interactive). */
  interactive?: boolean;
  /** Also count it in account_usage/key_usage, as admission does. */
  billed?: boolean;
}

export async function enqueue(db: Db, accountId: string, opts: JobOpts = {}): Promise<string> {
  const units = opts.units ?? 1;
  const row = await db
    .insertInto('submissions')
    .values({
      account_id: accountId,
      key_id: opts.keyId ?? null,
      compiler: opts.compiler ?? 'python-3.9.7',
      code: opts.code ?? 'print(1)\n',
      input: opts.input ?? null,
      tests: opts.tests ? JSON.stringify(opts.tests) : null,
      month: MONTH,
      units,
      ...(opts.priority !== undefined ? { priority: opts.priority } : {}),
      ...(opts.runAt ? { run_at: opts.runAt } : {}),
      ...(opts.createdAt ? { created_at: opts.createdAt } : {}),
      ...(opts.maxAttempts !== undefined ? { max_attempts: opts.maxAttempts } : {}),
      ...(opts.mode ? { mode: opts.mode } : {}),
      ...(opts.interactive ? { mode: 'ws' as const, run_options: JSON.stringify({ interactive: true }) } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (opts.billed) {
    await sql`INSERT INTO account_usage (account_id, month, submissions) VALUES (${accountId}, ${MONTH}, ${units})
              ON CONFLICT (account_id, month) DO UPDATE SET submissions = account_usage.submissions + ${units}`.execute(db);
    if (opts.keyId) {
      await sql`INSERT INTO key_usage (key_id, month, submissions) VALUES (${opts.keyId}, ${MONTH}, ${units})
                ON CONFLICT (key_id, month) DO UPDATE SET submissions = key_usage.submissions + ${units}`.execute(db);
    }
  }
  return row.id;
}

export async function accountUsage(db: Db, accountId: string): Promise<number> {
  const row = await db.selectFrom('account_usage').select('submissions').where('account_id', '=', accountId).where('month', '=', MONTH).executeTakeFirst();
  return row?.submissions ?? 0;
}

export async function keyUsage(db: Db, keyId: string): Promise<number> {
  const row = await db.selectFrom('key_usage').select('submissions').where('key_id', '=', keyId).where('month', '=', MONTH).executeTakeFirst();
  return row?.submissions ?? 0;
}

/** accounts.running_now must equal the number of the account's running rows. */
export async function expectNoDrift(db: Db): Promise<void> {
  const { rows } = await sql<{ id: string; running_now: number; actual: number }>`
    SELECT a.id, a.running_now,
           (SELECT count(*)::int FROM submissions s WHERE s.account_id = a.id AND s.state = 'running') AS actual
    FROM accounts a
  `.execute(db);
  for (const r of rows) expect(r.running_now, `running_now of account ${r.id}`).to.equal(r.actual);
}

export async function stateOf(db: Db, id: string) {
  return db.selectFrom('submissions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Makes a running job's lease look expired, as if its runner had stopped heart-beating. */
export async function expireLease(db: Db, id: string): Promise<void> {
  await sql`UPDATE submissions SET lease_expires_at = now() - interval '1 second' WHERE id = ${id}`.execute(db);
}

/** Waits (polling) until every job is in one of `states`; the suite's timeout bounds it. */
export async function waitForStates(db: Db, ids: string[], states: string[]): Promise<void> {
  for (;;) {
    const rows = await db.selectFrom('submissions').select(['id', 'state']).where('id', 'in', ids).execute();
    if (rows.length === ids.length && rows.every((r) => states.includes(r.state))) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The most intervals [start, end] open at one instant (an end at t frees its slot for a start at t). */
export function maxOverlap(intervals: ReadonlyArray<readonly [number, number]>): number {
  const events = intervals.flatMap(([s, e]) => [
    [s, 1],
    [e, -1],
  ]);
  events.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let open = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (open += d!));
  return max;
}
