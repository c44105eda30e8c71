import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { JOBS_CHANNEL, type JobRef, refParts } from './job.js';
import { retryOnConflict } from './retry.js';

/**
 * Hands a job this runner holds but has not started back to the queue (shutdown):
 * the claim's attempt is taken back, the account's slot freed, and other runners
 * woken. Returns false when the job was no longer ours.
 */
export async function release(db: Db, runnerId: string, ref: JobRef): Promise<boolean> {
  const { id, attempt } = refParts(ref);
  const { rows } = await retryOnConflict(() =>
    sql<{ id: string }>`
      WITH back AS (
        UPDATE submissions s
        SET state = 'queued', locked_by = NULL, lease_expires_at = NULL, started_at = NULL,
            attempts = greatest(s.attempts - 1, 0)
        WHERE id = ${id} AND locked_by = ${runnerId} AND state = 'running'
          AND (${attempt}::int IS NULL OR attempts = ${attempt})
        RETURNING s.id, s.account_id
      ),
      slot AS (
        UPDATE accounts a SET running_now = a.running_now - 1 FROM back WHERE a.id = back.account_id RETURNING a.id
      )
      SELECT back.id, pg_notify(${JOBS_CHANNEL}, '') FROM back
    `.execute(db),
  );
  return rows.length === 1;
}
