import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { AttemptOutcome } from './delivery.js';

export interface RetryPolicy {
  /** Attempts in all; after the last failed one the delivery is dead. */
  maxAttempts: number;
  /** Delay after the first failed attempt; doubled after each further one. */
  backoffMs: number;
}

/**
 * Records one attempt's outcome, only while `senderId` still holds the delivery.
 * A failure is retried after backoffMs * 2^(attempts - 1), with ±25% jitter so that
 * many deliveries failing together do not retry together; the time is computed here,
 * in SQL, so every sender agrees on it. A permanent failure, or the last attempt,
 * makes the delivery dead. Returns false when the delivery was no longer ours.
 */
export async function settleDelivery(db: Db, senderId: string, id: string, outcome: AttemptOutcome, policy: RetryPolicy): Promise<boolean> {
  if (outcome.ok) {
    const { rows } = await sql<{ id: string }>`
      UPDATE callback_deliveries
      SET state = 'delivered', last_status = ${outcome.status}, last_error = NULL, delivered_at = now(),
          locked_by = NULL, lease_expires_at = NULL, updated_at = now()
      WHERE id = ${id} AND locked_by = ${senderId} AND state = 'pending'
      RETURNING id
    `.execute(db);
    return rows.length === 1;
  }
  const { rows } = await sql<{ id: string }>`
    UPDATE callback_deliveries
    SET state = CASE WHEN ${outcome.permanent} OR attempts >= ${policy.maxAttempts} THEN 'dead' ELSE 'pending' END,
        run_at = now() + make_interval(secs =>
          ${policy.backoffMs / 1000}::float8 * power(2, least(attempts - 1, 30)) * (0.75 + random() * 0.5)),
        last_status = ${outcome.status}, last_error = ${outcome.error},
        locked_by = NULL, lease_expires_at = NULL, updated_at = now()
    WHERE id = ${id} AND locked_by = ${senderId} AND state = 'pending'
    RETURNING id
  `.execute(db);
  return rows.length === 1;
}

/**
 * Deliveries whose sender died mid-attempt on their last allowed attempt: nobody will
 * claim them again (the claim does not check attempts), so they are marked dead here.
 */
export async function buryExhausted(db: Db, maxAttempts: number): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    UPDATE callback_deliveries
    SET state = 'dead', last_error = coalesce(last_error, 'sender stopped mid-attempt'), locked_by = NULL,
        lease_expires_at = NULL, updated_at = now()
    WHERE state = 'pending' AND attempts >= ${maxAttempts} AND lease_expires_at < now()
    RETURNING id
  `.execute(db);
  return rows.length;
}
