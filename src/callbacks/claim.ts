import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { ClaimedDelivery } from './delivery.js';

/**
 * Claims up to `n` due deliveries for `senderId` in one statement: pending ones whose
 * time has come and that nobody holds (or whose holder's lease ran out: that sender
 * died mid-attempt). SKIP LOCKED lets several senders claim side by side without
 * waiting on each other; the attempt is counted at the claim, so an attempt cut
 * short by a crash still counts (buryExhausted ends those out of attempts).
 */
export async function claimDeliveries(db: Db, senderId: string, n: number, leaseMs: number, maxAttempts: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`
    WITH due AS (
      SELECT id FROM callback_deliveries
      WHERE state = 'pending' AND run_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at < now())
        AND attempts < ${maxAttempts}
      ORDER BY run_at
      LIMIT ${n}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE callback_deliveries d
    SET locked_by = ${senderId},
        lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}),
        attempts = d.attempts + 1,
        updated_at = now()
    FROM due, api_keys k, submissions s
    WHERE d.id = due.id AND k.id = d.key_id AND s.id = d.submission_id
    RETURNING d.id, d.submission_id::text, d.url, d.method, d.format, d.payload, s.extra_params::text AS extra_params_json, d.attempts, k.signing_secret,
      k.account_id::text AS key_account_id, k.kind AS key_kind, k.student AS key_student
  `.execute(db);
  return rows;
}

/** When the next pending delivery falls due (null: none pending), for the sender's timer. */
export async function nextDueAt(db: Db): Promise<Date | null> {
  const { rows } = await sql<{ at: Date | null }>`
    SELECT min(greatest(run_at, coalesce(lease_expires_at, run_at))) AS at FROM callback_deliveries WHERE state = 'pending'
  `.execute(db);
  return rows[0]?.at ?? null;
}
