import type { Db } from '../db/connect.js';
import { expiredSubmission, type ExpiredSubmission } from '../retention/expired.js';
import { orderedJson, RawJson } from '../util/raw-json.js';
import { UUID } from '../util/uuid.js';
import { storedResultJson } from './live.js';
import type { Asker } from '../problems/feedback.js';

// A submission as GET /api/v2/submissions/:id answers it (JSON text, fields in their
// documented order): its state and times, its result once it has ended, its latest
// callback delivery. The portal's submission page shows the same text.

/** What a lookup finds: the submission, its tombstone (purged by the retention), or nothing. */
export type SubmissionLookup = { json: string } | { expired: ExpiredSubmission } | undefined;

/**
 * Reads in one snapshot (REPEATABLE READ), so a purge committing between its statements
 * cannot leave it with the row but not its result: it sees the submission whole, or its
 * tombstone, which the purge writes in the same transaction as the delete.
 */
export function inSnapshot<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().setIsolationLevel('repeatable read').execute(fn);
}

/** The submission of this account as JSON text, or its tombstone; undefined for another account's, an unknown or a malformed id. */
export async function lookupSubmission(db: Db, asker: Asker, id: string): Promise<SubmissionLookup> {
  if (!UUID.test(id)) return undefined;
  return inSnapshot(db, async (trx) => {
    const json = await submissionViewJson(trx, asker, id);
    if (json !== undefined) return { json };
    const expired = await expiredSubmission(trx, asker.accountId, id);
    return expired ? { expired } : undefined;
  });
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

/** The submission of the asker's account as JSON text, its result as the asker may see it; undefined for another account's, an unknown, a purged or a malformed id. */
export async function submissionViewJson(db: Db, asker: Asker, id: string): Promise<string | undefined> {
  if (!UUID.test(id)) return undefined;
  const accountId = asker.accountId;
  const row = await db
    .selectFrom('submissions')
    .select(['id', 'state', 'created_at', 'started_at', 'finished_at', 'account_id'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (!row) return undefined;
  const delivery = await db
    .selectFrom('callback_deliveries')
    .select(['state', 'attempts', 'last_status', 'last_error', 'run_at'])
    .where('submission_id', '=', id)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
  const ended = row.state === 'finished' || row.state === 'failed';
  // The result in its documented field order, extra_params as sent (src/result.ts).
  return orderedJson([
    ['id', row.id],
    ['state', row.state],
    ['created_at', iso(row.created_at)],
    ['started_at', iso(row.started_at)],
    ['finished_at', iso(row.finished_at)],
    ['result', ended ? new RawJson(await storedResultJson(db, id, asker)) : undefined],
    [
      'callback',
      delivery
        ? {
            state: delivery.state,
            attempts: delivery.attempts,
            last_status: delivery.last_status,
            last_error: delivery.last_error,
            next_attempt_at: delivery.state === 'pending' ? iso(delivery.run_at) : null,
          }
        : null,
    ],
  ]);
}
