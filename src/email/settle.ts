import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// The outcome of one send, guarded by the claim's owner: a mailer whose lease ran out
// records nothing (another mailer holds the row now).

export async function markSent(db: Db, mailerId: string, id: string): Promise<boolean> {
  const res = await sql`
    UPDATE usage_emails SET sent_at = now(), locked_by = NULL, lease_expires_at = NULL, last_error = NULL
    WHERE id = ${id} AND locked_by = ${mailerId} AND sent_at IS NULL
  `.execute(db);
  return Number(res.numAffectedRows ?? 0) === 1;
}

/** Back to the outbox after `backoffMs` × 2^(attempts − 1), at most an hour; computed in SQL so every mailer agrees. */
export async function markFailed(db: Db, mailerId: string, id: string, error: string, backoffMs: number): Promise<boolean> {
  const res = await sql`
    UPDATE usage_emails
    SET locked_by = NULL, lease_expires_at = NULL, last_error = ${error.slice(0, 1000)},
        run_at = now() + make_interval(secs => least(3600, ${backoffMs / 1000} * power(2, least(attempts, 20) - 1)))
    WHERE id = ${id} AND locked_by = ${mailerId} AND sent_at IS NULL
  `.execute(db);
  return Number(res.numAffectedRows ?? 0) === 1;
}
