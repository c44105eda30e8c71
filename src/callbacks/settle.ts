import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { nextAttemptAt, type RetryPolicy } from '../queue/outbox-backoff.js';
import type { AttemptOutcome } from './delivery.js';

export type { RetryPolicy } from '../queue/outbox-backoff.js';

/**
 * Records one attempt's outcome, only while `senderId` still holds the delivery.
 * A failure is retried by the outboxes' rule (nextAttemptAt). A permanent failure, or the last attempt,
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
        run_at = ${nextAttemptAt(policy.backoffMs)},
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
