import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Deleting submissions older than the retention (RUNBOX_RETENTION_DAYS), oldest first, in
// batches of one statement each, so no lock is held longer than one batch and admission
// never waits on the purge: the rows it deletes are ended ones that nothing else writes,
// taken with SKIP LOCKED. Batched deletes rather than monthly partitions: measured in
// bench/year.ts, reasoned in docs/operating.md#retention.
//
// One batch, in one statement (one transaction), while no other process's batch runs:
// - picks the oldest ended submissions made before the cutoff whose callback is not still
//   pending (a delivery waiting or being tried keeps its submission until it is delivered
//   or dead);
// - deletes them and their callback deliveries;
// - writes each one's tombstone (submissions_expired), so its lookup answers 410;
// - adds them to the per-day totals (usage_days) that the dashboard reads beside the
//   rows still kept.
// Queued and running submissions are never touched, and neither are the replay tables
// of live runs (submission_output, submission_input), which keep 10 minutes anyway.

/** Rows per batch (bench/year.ts: about 0.1 s a batch on a year of rows on a busy 2-core host). */
export const PURGE_BATCH_ROWS = 1000;
/**
 * Between batches, at least this long and at least as long as the batch took, so a long
 * purge (the first one after an upgrade, of months of rows) uses at most half of one
 * database backend's time and leaves the rest to the service.
 */
export const PURGE_PAUSE_MS = 50;

/** The pause after a batch that took `batchMs`. */
export function pauseAfter(batchMs: number, minMs: number = PURGE_PAUSE_MS): number {
  return Math.max(minMs, Math.round(batchMs));
}

export interface PurgeCounts {
  submissions: number;
  deliveries: number;
}

/** One batch at a time across the deployment: a transaction-scoped advisory lock (it holds through PgBouncer's transaction pooling). */
const PURGE_LOCK = 7_316_003;

export interface PurgeBatch extends PurgeCounts {
  /** Another process's batch held the purge: nothing was done. */
  busy: boolean;
}

/** The cutoff for a retention of `days`, by the database's clock (the same for every host). */
export async function retentionCutoff(db: Db, days: number): Promise<Date> {
  const { rows } = await sql<{ cutoff: Date }>`SELECT now() - make_interval(days => ${days}) AS cutoff`.execute(db);
  return new Date(rows[0]!.cutoff);
}

/** Deletes one batch of submissions made before `cutoff`; 0 submissions: nothing is left to purge. */
export async function purgeBatch(db: Db, cutoff: Date, rows: number = PURGE_BATCH_ROWS): Promise<PurgeBatch> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { rows: out } = await sql<PurgeBatch>`
        WITH gate AS (SELECT pg_try_advisory_xact_lock(${PURGE_LOCK}) AS ok),
        doomed AS (
          SELECT s.id FROM submissions s, gate
          WHERE gate.ok AND s.created_at < ${cutoff} AND s.state IN ('finished', 'failed')
            AND NOT EXISTS (SELECT 1 FROM callback_deliveries c WHERE c.submission_id = s.id AND c.state = 'pending')
          ORDER BY s.created_at
          LIMIT ${rows}
          FOR UPDATE OF s SKIP LOCKED
        ),
        deliveries AS (
          DELETE FROM callback_deliveries c USING doomed d WHERE c.submission_id = d.id RETURNING c.id
        ),
        gone AS (
          DELETE FROM submissions s USING doomed d WHERE s.id = d.id
          RETURNING s.id, s.account_id, s.key_id, s.created_at, s.units, s.refunded
        ),
        tombstones AS (
          INSERT INTO submissions_expired (id, account_id, created_at)
          SELECT id, account_id, created_at FROM gone
          ON CONFLICT (id) DO NOTHING
        ),
        days AS (
          INSERT INTO usage_days (account_id, key_id, day, runs, last_at)
          SELECT account_id, coalesce(key_id, 0), (created_at AT TIME ZONE 'UTC')::date,
                 coalesce(sum(units) FILTER (WHERE NOT refunded), 0), max(created_at)
          FROM gone GROUP BY 1, 2, 3
          ON CONFLICT (account_id, key_id, day) DO UPDATE
          SET runs = usage_days.runs + excluded.runs, last_at = greatest(usage_days.last_at, excluded.last_at)
        )
        SELECT (SELECT count(*) FROM gone)::int AS submissions, (SELECT count(*) FROM deliveries)::int AS deliveries,
               NOT (SELECT ok FROM gate) AS busy
      `.execute(db);
      return out[0]!;
    } catch (err) {
      // A redelivery queued for one of them after the batch looked (foreign key): that
      // submission keeps its pending delivery; the batch is taken again without it.
      if ((err as { code?: string }).code !== '23503' || attempt >= 5) throw err;
    }
  }
}

export interface PurgeOptions {
  rows?: number;
  pauseMs?: number;
  /** Stops between batches. */
  signal?: AbortSignal;
  onBatch?: (batch: PurgeCounts, total: PurgeCounts) => void;
}

/**
 * Purges batch after batch until nothing made before `cutoff` is left, `signal` stops it,
 * or another process holds the purge (busy: that one goes on).
 */
export async function purgeOlderThan(db: Db, cutoff: Date, opts: PurgeOptions = {}): Promise<PurgeBatch> {
  const total: PurgeBatch = { submissions: 0, deliveries: 0, busy: false };
  const pauseMs = opts.pauseMs ?? PURGE_PAUSE_MS;
  while (!opts.signal?.aborted) {
    const t0 = performance.now();
    const batch = await purgeBatch(db, cutoff, opts.rows);
    if (batch.busy) {
      total.busy = true;
      break;
    }
    total.submissions += batch.submissions;
    total.deliveries += batch.deliveries;
    if (batch.submissions > 0) opts.onBatch?.(batch, total);
    if (batch.submissions < (opts.rows ?? PURGE_BATCH_ROWS)) break;
    if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseAfter(performance.now() - t0, pauseMs)));
  }
  return total;
}
