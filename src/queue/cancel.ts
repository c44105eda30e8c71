import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { DONE_CHANNEL } from './job.js';
import { refundCtes } from './refund-sql.js';
import { retryOnConflict } from './retry.js';

/** Notified with the submission id when the caller of a running submission went away. */
export const CANCEL_CHANNEL = 'runbox_cancel';

export type Cancelled = 'stopping' | 'withdrawn' | 'none';

/**
 * The caller of a synchronous or WebSocket run went away. A job still queued is
 * withdrawn at once: failed with a `cancelled` result and refunded (it never ran). A
 * running job is marked cancelled and its runner told (NOTIFY runbox_cancel): the
 * runner stops the sandbox and completes the job, which frees the account's slot; it
 * stays counted, since it started. One statement: a claim racing with it either
 * happened before (the job is running) or finds it ended.
 */
export async function cancelSubmission(db: Db, id: string): Promise<Cancelled> {
  const { rows } = await retryOnConflict(() =>
    sql<{ state: string }>`
      WITH moved AS (
        UPDATE submissions s
        SET cancelled_at = now(),
            state = CASE WHEN s.state = 'queued' THEN 'failed' ELSE s.state END,
            finished_at = CASE WHEN s.state = 'queued' THEN now() ELSE s.finished_at END,
            refunded = s.refunded OR s.state = 'queued',
            last_error = CASE WHEN s.state = 'queued' THEN 'cancelled: the caller went away' ELSE s.last_error END,
            result = CASE WHEN s.state = 'queued' THEN jsonb_build_object(
              'id', s.id::text, 'compiler', s.compiler, 'status', 'cancelled',
              'output', '', 'error', 'the caller went away before the run started', 'exit_code', NULL, 'signal', NULL,
              'time', NULL, 'total', NULL, 'memory', NULL, 'limit_exceeded', NULL, 'truncated', false,
              'stdout_truncated', false, 'stderr_truncated', false, 'compile_output', NULL,
              'extra_params', s.extra_params) ELSE s.result END
        WHERE s.id = ${id} AND s.state IN ('queued', 'running') AND s.cancelled_at IS NULL
        RETURNING s.id, s.state, s.account_id, s.key_id, s.month, s.units
      ),
      to_refund AS (SELECT account_id, key_id, month, units FROM moved WHERE state = 'failed'),
      ${refundCtes('to_refund')}
      -- runbox_done carries the final state (id:state, src/queue/done.ts).
      SELECT state, CASE WHEN state = 'running' THEN pg_notify(${CANCEL_CHANNEL}, id::text)
                         ELSE pg_notify(${DONE_CHANNEL}, id::text || ':failed') END FROM moved
    `.execute(db),
  );
  const state = rows[0]?.state;
  return state === 'running' ? 'stopping' : state === 'failed' ? 'withdrawn' : 'none';
}

/** Of the given running submissions, those whose caller went away (a runner catching up on missed notifications). */
export async function cancelledAmong(db: Db, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    SELECT id::text FROM submissions WHERE id = ANY(${ids}::uuid[]) AND cancelled_at IS NOT NULL
  `.execute(db);
  return rows.map((r) => r.id);
}
