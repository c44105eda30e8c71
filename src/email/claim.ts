import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

export interface ClaimedEmail {
  id: string;
  account_id: string;
  key_id: string | null;
  month: string;
  threshold: number;
  used: number;
  monthly_limit: number;
  to_address: string;
  attempts: number;
  app_name: string | null;
  key_prefix: string | null;
}

/**
 * Claims up to `n` pending usage emails that are due and not held (or whose holder's
 * lease ran out) for `mailerId`, in one statement. SKIP LOCKED lets several mailers
 * work side by side; the attempt is counted at the claim, so an attempt cut short by
 * a crash still counts (buryExhaustedEmails ends those out of attempts).
 */
export async function claimEmails(db: Db, mailerId: string, n: number, leaseMs: number, maxAttempts: number): Promise<ClaimedEmail[]> {
  const { rows } = await sql<ClaimedEmail>`
    WITH due AS (
      SELECT id FROM usage_emails
      WHERE state = 'pending' AND run_at <= now() AND (lease_expires_at IS NULL OR lease_expires_at < now())
        AND attempts < ${maxAttempts}
      ORDER BY run_at
      LIMIT ${n}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE usage_emails e
    SET locked_by = ${mailerId}, lease_expires_at = now() + make_interval(secs => ${leaseMs / 1000}), attempts = e.attempts + 1
    FROM due
    WHERE e.id = due.id
    RETURNING e.id, e.account_id::text, e.key_id::text, e.month, e.threshold, e.used, e.monthly_limit, e.to_address, e.attempts,
              (SELECT k.app_name FROM api_keys k WHERE k.id = e.key_id) AS app_name,
              (SELECT k.key_prefix FROM api_keys k WHERE k.id = e.key_id) AS key_prefix
  `.execute(db);
  return rows;
}
