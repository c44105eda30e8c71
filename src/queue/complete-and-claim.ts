import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { executePrepared } from '../db/prepared.js';
import type { RunResult } from '../result.js';
import { type AccountShare, claimedCte, normalizeJob, pickCtes, slotCtes, lostTurnColumn } from './claim.js';
import { doneCte, notifyDone } from './complete.js';
import type { ClaimedJob, JobRef } from './job.js';
import { retryOnConflict } from './retry.js';
import { type WakeTokens, wakeCte } from './wake.js';

/**
 * complete() and a claim of the runner's next job in ONE statement, so a runner's slot
 * turns over with one round trip and one commit. The result is stored only while
 * `runnerId` still holds the job (as complete()); the next job is claimed whether or
 * not it did. Slots move by their net change per account: the finished job's account
 * gives one back, the next job's account takes one (re-checked against its limit on
 * the latest row version), and when both are the same account the slot passes over.
 */
export async function completeAndClaim(
  db: Db,
  runnerId: string,
  ref: JobRef,
  result: RunResult,
  leaseSeconds: number,
  /** The runner's share for one account (claim()'s). */
  share?: AccountShare,
  /** The runner's wake tokens (claim()'s): left at its free slots, this one included when nothing is claimed. */
  wake?: WakeTokens,
): Promise<{
  completed: boolean;
  next: ClaimedJob | null;
  /** A job was picked but its account's slot went to another runner first, or another slot of this runner claimed at the same instant. */
  lostRace: boolean;
}> {
  const { rows } = await retryOnConflict(() =>
    executePrepared(db, 'runbox_complete_claim', sql<{ completed: number; lost_turn: number; picked: number; next: ClaimedJob | null }>`
      WITH ${doneCte(ref, runnerId, result)},
      ${pickCtes(1, 'done', undefined, share)},
      delta AS (
        SELECT account_id, sum(d)::int AS d
        FROM (SELECT account_id, -1 AS d FROM done UNION ALL SELECT account_id, 1 FROM pick) moves
        GROUP BY account_id
      ),
      ${slotCtes()},
      ${claimedCte(runnerId, leaseSeconds)}${wake ? sql`,${wakeCte(wake, 1)}` : sql``}
      SELECT (SELECT count(*) FROM done)::int AS completed, ${notifyDone} AS told,
             ${lostTurnColumn(share)} AS lost_turn, (SELECT count(*) FROM pick)::int AS picked,
             (SELECT to_jsonb(claimed) FROM claimed) AS next
    `),
  );
  const row = rows[0]!;
  return { completed: row.completed === 1, next: row.next ? normalizeJob(row.next) : null, lostRace: row.lost_turn === 1 || (row.picked > 0 && !row.next) };
}
