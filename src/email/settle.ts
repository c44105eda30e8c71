import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { nextAttemptAt, type RetryPolicy } from '../queue/outbox-backoff.js';

// The outcome of one send, guarded by the claim's owner: a mailer whose lease ran out
// records nothing (another mailer holds the row now).

export async function markSent(db: Db, mailerId: string, id: string): Promise<boolean> {
  const res = await sql`
    UPDATE usage_emails SET state = 'sent', sent_at = now(), locked_by = NULL, lease_expires_at = NULL, last_error = NULL
    WHERE id = ${id} AND locked_by = ${mailerId} AND state = 'pending'
  `.execute(db);
  return Number(res.numAffectedRows ?? 0) === 1;
}

/**
 * Back to the outbox by the outboxes' retry rule (the callbacks' one), or dead after
 * the last attempt. Returns the state the email is left in, or null when it was no
 * longer ours.
 */
export async function markFailed(db: Db, mailerId: string, id: string, error: string, policy: RetryPolicy): Promise<'pending' | 'dead' | null> {
  const { rows } = await sql<{ state: 'pending' | 'dead' }>`
    UPDATE usage_emails
    SET state = CASE WHEN attempts >= ${policy.maxAttempts} THEN 'dead' ELSE 'pending' END,
        run_at = ${nextAttemptAt(policy.backoffMs)},
        locked_by = NULL, lease_expires_at = NULL, last_error = ${error.slice(0, 1000)}
    WHERE id = ${id} AND locked_by = ${mailerId} AND state = 'pending'
    RETURNING state
  `.execute(db);
  return rows[0]?.state ?? null;
}

/** Emails whose mailer died mid-attempt on their last allowed attempt: nobody will claim them again, so they die here. */
export async function buryExhaustedEmails(db: Db, maxAttempts: number): Promise<number> {
  const res = await sql`
    UPDATE usage_emails
    SET state = 'dead', last_error = coalesce(last_error, 'mailer stopped mid-attempt'), locked_by = NULL, lease_expires_at = NULL
    WHERE state = 'pending' AND attempts >= ${maxAttempts} AND lease_expires_at < now()
  `.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
