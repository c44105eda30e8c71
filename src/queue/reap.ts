import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { DONE_CHANNEL, JOBS_CHANNEL } from './job.js';
import { refundCtes } from './refund-sql.js';
import { retryOnConflict } from './retry.js';

// Any runner may reap; a transaction-scoped advisory lock lets one reaper at a time
// through (the others find nothing to do), so two reapers never lock counter rows in
// opposite orders. The key is arbitrary but fixed.
const REAPER_LOCK = 7_316_001;

export interface Reaped {
  requeued: string[];
  failed: string[];
}

/**
 * Jobs whose runner stopped heart-beating: back to the queue while attempts remain,
 * else failed and refunded. One statement; expired rows a completing runner holds
 * locked right now are skipped (that runner is not dead after all).
 */
export async function reapExpired(db: Db): Promise<Reaped> {
  const { rows } = await retryOnConflict(() =>
    sql<{ id: string; state: 'queued' | 'failed' }>`
      WITH gate AS (SELECT pg_try_advisory_xact_lock(${REAPER_LOCK}) AS ok),
      expired AS (
        SELECT s.id, s.refunded FROM submissions s, gate
        WHERE gate.ok AND s.state = 'running' AND s.lease_expires_at < now()
        ORDER BY s.id
        FOR UPDATE OF s SKIP LOCKED
      ),
      moved AS (
        UPDATE submissions s
        SET state = CASE WHEN s.attempts < s.max_attempts THEN 'queued' ELSE 'failed' END,
            locked_by = CASE WHEN s.attempts < s.max_attempts THEN NULL ELSE s.locked_by END,
            lease_expires_at = NULL,
            finished_at = CASE WHEN s.attempts < s.max_attempts THEN NULL ELSE now() END,
            refunded = s.refunded OR s.attempts >= s.max_attempts,
            last_error = 'runner stopped responding (lease expired)'
        FROM expired e
        WHERE s.id = e.id
        RETURNING s.id, s.state, s.account_id, s.key_id, s.month, s.units, (s.state = 'failed' AND NOT e.refunded) AS refund_now
      ),
      slots AS (
        UPDATE accounts a SET running_now = a.running_now - m.n
        FROM (SELECT account_id, count(*)::int AS n FROM moved GROUP BY account_id) m
        WHERE a.id = m.account_id
        RETURNING a.id
      ),
      to_refund AS (SELECT account_id, key_id, month, units FROM moved WHERE refund_now),
      ${refundCtes('to_refund')}
      SELECT id, state,
             CASE WHEN state = 'queued' THEN pg_notify(${JOBS_CHANNEL}, '') ELSE pg_notify(${DONE_CHANNEL}, id::text || ':failed') END
      FROM moved
    `.execute(db),
  );
  return {
    requeued: rows.filter((r) => r.state === 'queued').map((r) => r.id),
    failed: rows.filter((r) => r.state === 'failed').map((r) => r.id),
  };
}
