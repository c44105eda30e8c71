import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunResult } from '../result.js';
import { DONE_CHANNEL, type JobRef, refParts } from './job.js';
import { refundCtes } from './refund-sql.js';
import { retryOnConflict } from './retry.js';

/** Tests a judged run skipped (stop_on_failure): not run, so neither counted nor billed. */
export function skippedTests(result: RunResult): number {
  return result.tests?.filter((t) => t.status === 'skipped').length ?? 0;
}

/**
 * The `done` CTE: the job stored as finished with `result`, only while `runnerId` still
 * holds this attempt of it; returns (id, account_id, mode, result, extra_params). The
 * tests it skipped leave its units and the month's usage of its account and key
 * (`skipped_refund`). Shared with completeAndClaim.
 */
export function doneCte(ref: JobRef, runnerId: string, result: RunResult): RawBuilder<unknown> {
  const { id, attempt } = refParts(ref);
  const skipped = skippedTests(result);
  return sql`
    done AS (
      UPDATE submissions
      SET state = 'finished', result = ${JSON.stringify(result)}::jsonb, finished_at = now(), lease_expires_at = NULL,
          units = units - ${skipped}::int
      WHERE id = ${id} AND locked_by = ${runnerId} AND state = 'running'
        AND (${attempt}::int IS NULL OR attempts = ${attempt})
      RETURNING id, account_id, key_id, month, mode, result, extra_params
    ),
    skipped_units AS (SELECT account_id, key_id, month, ${skipped}::int AS units FROM done WHERE ${skipped}::int > 0),
    ${refundCtes('skipped_units')}`;
}

/** Postgres refuses a NOTIFY payload of this many bytes or more. */
const NOTIFY_PAYLOAD_LIMIT = 8000;

/**
 * A select-list expression that NOTIFYs runbox_done for the rows of `done` something
 * may be waiting on live: every mode but 'async' and 'batch' (those are polled for, called
 * back or read in a batch's results).
 * Postgres serialises the commits of all notifying transactions through their WAL
 * flush, so a NOTIFY nobody listens for would cap how many jobs a second complete,
 * whatever the number of runners. The payload carries the result when it fits
 * (`id:finished:{"r": result, "x": extra_params as stored}`), so the API answering a
 * waiting client needs no query; otherwise it is `id:finished` (src/queue/done.ts).
 */
export const notifyDone = sql`(
  SELECT count(pg_notify(${DONE_CHANNEL}, CASE WHEN octet_length(n.full) < ${NOTIFY_PAYLOAD_LIMIT} THEN n.full ELSE n.id::text || ':finished' END))
  FROM (SELECT id, id::text || ':finished:' || json_build_object('r', result, 'x', extra_params::text)::text AS full
        FROM done WHERE mode NOT IN ('async', 'batch')) n)`;

/**
 * Stores a job's result and frees its account's slot, only while `runnerId` still
 * holds the job: a runner whose lease ran out cannot overwrite a job that another
 * runner now holds. Returns false when the job was no longer ours. locked_by stays
 * as the record of who ran it.
 */
export async function complete(db: Db, runnerId: string, ref: JobRef, result: RunResult): Promise<boolean> {
  const { rows } = await retryOnConflict(() =>
    sql<{ id: string }>`
      WITH ${doneCte(ref, runnerId, result)},
      slot AS (
        UPDATE accounts a SET running_now = a.running_now - 1 FROM done WHERE a.id = done.account_id RETURNING a.id
      )
      SELECT done.id, ${notifyDone} AS told FROM done
    `.execute(db),
  );
  return rows.length === 1;
}
