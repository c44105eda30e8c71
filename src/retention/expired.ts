import type { Db } from '../db/connect.js';
import { UUID } from '../util/uuid.js';

// Submissions the retention purge removed, as every lookup tells them: the REST lookup
// and the Judge0 one answer 410 submission_expired, the portal says it in words, the
// admin CLI says so for callbacks. Only to the account the submission was made by;
// anyone else gets the 404 of an unknown id, so ids still cannot be probed.

export interface ExpiredSubmission {
  id: string;
  createdAt: Date;
  purgedAt: Date;
}

/** Tombstones of these ids made by this account (null: by any account, for the operator). */
export async function expiredSubmissions(db: Db, accountId: string | null, ids: string[]): Promise<Map<string, ExpiredSubmission>> {
  const wanted = ids.filter((id) => UUID.test(id));
  if (wanted.length === 0) return new Map();
  let q = db.selectFrom('submissions_expired').select(['id', 'created_at', 'purged_at']).where('id', 'in', wanted);
  if (accountId !== null) q = q.where('account_id', '=', accountId);
  const rows = await q.execute();
  return new Map(rows.map((r) => [r.id, { id: r.id, createdAt: new Date(r.created_at), purgedAt: new Date(r.purged_at) }]));
}

export async function expiredSubmission(db: Db, accountId: string | null, id: string): Promise<ExpiredSubmission | undefined> {
  return (await expiredSubmissions(db, accountId, [id])).get(id);
}

const day = (d: Date) => d.toISOString().slice(0, 10);

/** The sentence every face says: what is gone, since when, and why. */
export function expiredMessage(e: ExpiredSubmission, retentionDays: number): string {
  const kept = retentionDays > 0 ? `submissions are kept for ${retentionDays} days` : 'removed under an earlier retention setting';
  return `submission ${e.id} has expired: it was made on ${day(e.createdAt)} and its code, input and result were deleted on ${day(e.purgedAt)} (${kept})`;
}
