import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunResult } from '../result.js';
import { DONE_CHANNEL, type JobRef, refParts } from './job.js';
import { refundCtes } from './refund-sql.js';
import { retryOnConflict } from './retry.js';

export interface FailOptions {
  /** Give the job's units back to the account's and key's monthly usage (once). */
  refund: boolean;
  /** A result to deliver anyway (an internal_error result), if the runner built one. */
  result?: RunResult;
}

/**
 * Marks a job this runner holds as failed, frees its account's slot and, with
 * `refund`, takes its units off the usage counters of its month (a job is refunded
 * at most once: `refunded` flips in the same statement). Returns false when the job
 * was no longer ours.
 */
export async function fail(db: Db, runnerId: string, ref: JobRef, error: string, options: FailOptions): Promise<boolean> {
  const { id, attempt } = refParts(ref);
  const result = options.result === undefined ? null : JSON.stringify(options.result);
  const { rows } = await retryOnConflict(() =>
    sql<{ id: string }>`
      WITH held AS (
        -- FOR UPDATE reads the latest row version, so refunded is the value this update replaces.
        SELECT id, refunded FROM submissions
        WHERE id = ${id} AND locked_by = ${runnerId} AND state = 'running'
          AND (${attempt}::int IS NULL OR attempts = ${attempt})
        FOR UPDATE
      ),
      failed AS (
        UPDATE submissions s
        SET state = 'failed', last_error = ${error}, result = ${result}::jsonb, finished_at = now(), lease_expires_at = NULL,
            refunded = held.refunded OR ${options.refund}
        FROM held
        WHERE s.id = held.id
        RETURNING s.id, s.account_id, s.key_id, s.month, s.units, (${options.refund} AND NOT held.refunded) AS refund_now
      ),
      slot AS (
        UPDATE accounts a SET running_now = a.running_now - 1 FROM failed WHERE a.id = failed.account_id RETURNING a.id
      ),
      to_refund AS (SELECT account_id, key_id, month, units FROM failed WHERE refund_now),
      ${refundCtes('to_refund')}
      SELECT failed.id, pg_notify(${DONE_CHANNEL}, failed.id::text || ':failed') FROM failed
    `.execute(db),
  );
  return rows.length === 1;
}
