import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { BATCH_LIMITS } from '../limits.js';
import { admitSubmission, type AdmissionRequest } from '../quota/admit.js';
import { resultFor, type Asker } from '../problems/feedback.js';
import { presentResult, internalErrorResult, type RunResult } from '../result.js';
import { UUID } from '../util/uuid.js';

// Batches as stored, and their feeding. A batch's items are admitted in their order as
// ordinary runs of mode 'batch' (every limit of the account checked, each billed as a
// run); an item refused for a while (the pending limit, the rate) waits for the next pass,
// one refused for good (the monthly allowance) gets the refusal as its result. Each item's
// submission id is chosen when the batch is stored, so an item is never admitted twice.
// Completion order is the trigger's (migration 0141).

/** A run as admission takes it, stored with its item. */
export type BatchRun = Pick<AdmissionRequest, 'compiler' | 'code' | 'input' | 'tests' | 'units' | 'extraParams' | 'extraParamsJson' | 'runOptions'>;

/** Refusals that the next pass may not meet: the item waits for it. */
const WAIT_REASONS = new Set(['too_many_pending', 'rate_limited']);

export interface BatchView {
  id: string;
  total: number;
  admitted: number;
  done: number;
  state: 'running' | 'done';
  created_at: string;
}

export async function createBatch(db: Db, accountId: string, keyId: string | null, runs: BatchRun[]): Promise<string> {
  return db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: string }>`
      INSERT INTO batches (account_id, key_id, total) VALUES (${accountId}, ${keyId}, ${runs.length}) RETURNING id`.execute(trx);
    const id = rows[0]!.id;
    await sql`
      INSERT INTO batch_items (batch_id, seq, run)
      SELECT ${id}, (r.n - 1)::int, r.run FROM jsonb_array_elements(${JSON.stringify(runs)}::jsonb) WITH ORDINALITY AS r(run, n)`.execute(trx);
    return id;
  });
}

export async function getBatch(db: Db, accountId: string, id: string): Promise<BatchView | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await sql<{ id: string; total: number; admitted: number; done: number; created_at: Date }>`
    SELECT id, total, admitted, done, created_at FROM batches WHERE id = ${id} AND account_id = ${accountId}`.execute(db);
  const b = rows[0];
  if (!b) return undefined;
  return { id: b.id, total: b.total, admitted: b.admitted, done: b.done, state: b.done >= b.total ? 'done' : 'running', created_at: b.created_at.toISOString() };
}

/** Results from completion offset `after` on: each as one JSON line (its offset, its index in the batch, its result or refusal), as `asker` may see it (a problem's feedback). */
export async function resultLines(db: Db, id: string, asker: Asker, after: number, limit: number): Promise<{ lines: string[]; last: number }> {
  const { rows } = await sql<{ seq: number; done_seq: number; submission_id: string; refusal: unknown; result: RunResult | null; compiler: string | null; extra: string | null }>`
    SELECT i.seq, i.done_seq, i.submission_id, i.refusal, s.result, s.compiler, s.extra_params::text AS extra
    FROM batch_items i LEFT JOIN submissions s ON s.id = i.submission_id AND i.refusal IS NULL
    WHERE i.batch_id = ${id} AND i.done_seq > ${after}
    ORDER BY i.done_seq LIMIT ${limit}`.execute(db);
  let last = after;
  const lines: string[] = [];
  for (const r of rows) {
    last = r.done_seq;
    const head = `{"offset":${r.done_seq},"index":${r.seq},"submission_id":"${r.submission_id}",`;
    if (r.refusal) {
      lines.push(`${head}"error":${JSON.stringify(r.refusal)}}`);
      continue;
    }
    const result = r.result ?? internalErrorResult({ id: r.submission_id, compiler: r.compiler ?? '', extra_params: null }, 'the run could not be completed');
    lines.push(`${head}"result":${presentResult(await resultFor(db, asker, result), { extraParamsJson: r.extra })}}`);
  }
  return { lines, last };
}

export interface FeedSettings {
  recipesDir: string;
  maxAttempts: number;
  runnerFreshSeconds: number;
  now: () => Date;
}

/**
 * One feeding pass: takes the batches with items to admit that no other process is
 * feeding (a lease), and admits their next items in order until one must wait. Returns
 * how many items it admitted or refused for good.
 */
export async function feedBatches(db: Db, settings: FeedSettings): Promise<number> {
  const token = randomUUID();
  const { rows: batches } = await sql<{ id: string; account_id: string; key_id: string | null }>`
    UPDATE batches SET fed_until = now() + make_interval(secs => ${BATCH_LIMITS.feedLeaseSeconds}), fed_by = ${token}
    WHERE id IN (SELECT id FROM batches WHERE admitted < total AND (fed_until IS NULL OR fed_until < now())
                 ORDER BY created_at LIMIT 20 FOR UPDATE SKIP LOCKED)
    RETURNING id, account_id::text, key_id::text`.execute(db);
  let moved = 0;
  for (const b of batches) {
    try {
      moved += await feedOne(db, settings, b, token);
    } finally {
      await sql`UPDATE batches SET fed_until = NULL WHERE id = ${b.id} AND fed_by = ${token}`.execute(db);
    }
  }
  return moved;
}

/** Renews this pass's lease on the batch; false when another process has taken it (this pass then stops). */
async function holdLease(db: Db, id: string, token: string): Promise<boolean> {
  const { rows } = await sql`
    UPDATE batches SET fed_until = now() + make_interval(secs => ${BATCH_LIMITS.feedLeaseSeconds})
    WHERE id = ${id} AND fed_by = ${token} AND fed_until > now() RETURNING id`.execute(db);
  return rows.length === 1;
}

async function feedOne(db: Db, settings: FeedSettings, b: { id: string; account_id: string; key_id: string | null }, token: string): Promise<number> {
  const { rows: items } = await sql<{ seq: number; run: BatchRun; submission_id: string }>`
    SELECT seq, run, submission_id FROM batch_items i WHERE batch_id = ${b.id} AND NOT admitted ORDER BY seq LIMIT ${BATCH_LIMITS.feedItemsPerPass}`.execute(db);
  let moved = 0;
  for (const item of items) {
    // The lease renewed before each admission: no other pass can admit this item meanwhile.
    if (!(await holdLease(db, b.id, token))) break;
    // Admitted by a feeder that stopped before it could say so.
    const { rows: stored } = await sql`SELECT 1 FROM submissions WHERE id = ${item.submission_id}`.execute(db);
    const admission = stored.length > 0 ? ({ admitted: true } as const) : await admitSubmission(db, {
      accountId: b.account_id,
      keyId: b.key_id,
      ...item.run,
      mode: 'batch',
      id: item.submission_id,
      recipesDir: settings.recipesDir,
      maxAttempts: settings.maxAttempts,
      runnerFreshSeconds: settings.runnerFreshSeconds,
      now: settings.now(),
    });
    if (!admission.admitted && WAIT_REASONS.has(admission.reason)) break;
    if (admission.admitted) {
      await sql`
        WITH item AS (UPDATE batch_items SET admitted = true WHERE batch_id = ${b.id} AND seq = ${item.seq} AND NOT admitted RETURNING seq)
        UPDATE batches SET admitted = admitted + (SELECT count(*) FROM item)::int WHERE id = ${b.id}`.execute(db);
    } else {
      // Refused for good: the refusal is its result, in completion order now.
      const refusal = { code: admission.reason, message: admission.message };
      await sql`
        WITH counted AS (UPDATE batches SET admitted = admitted + 1, done = done + 1 WHERE id = ${b.id} RETURNING done)
        UPDATE batch_items SET admitted = true, refusal = ${JSON.stringify(refusal)}::jsonb, done_seq = (SELECT done FROM counted)
        WHERE batch_id = ${b.id} AND seq = ${item.seq}`.execute(db);
    }
    moved++;
  }
  return moved;
}

/** Feeds every batch of the process's database on a timer, one pass at a time; `kick` starts a pass now. */
export function startBatchFeeder(db: Db, settings: FeedSettings, onError: (err: Error) => void): { kick(): void; close(): Promise<void> } {
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;
  const pass = () => {
    if (closed) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await feedBatches(db, settings);
        } catch (err) {
          onError(err as Error);
        }
      } while (again && !closed);
    })().finally(() => (running = null));
  };
  const timer = setInterval(pass, BATCH_LIMITS.feedIntervalMs);
  timer.unref();
  return {
    kick: pass,
    close: async () => {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
