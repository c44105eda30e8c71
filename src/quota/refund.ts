import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

// Refund of a submission that could not be started: it stops counting against the
// monthly allowances of its account and key, for the month it was billed to. One
// statement, guarded by `refunded = false`, so a second call changes nothing.

/** Returns true when this call refunded the submission, false when it was already refunded (or does not exist). */
export async function refundSubmission(trx: Kysely<Database> | Transaction<Database>, submissionId: string): Promise<boolean> {
  const { rows } = await sql<{ refunded: number }>`
    WITH s AS (
      UPDATE submissions SET refunded = true
       WHERE id = ${submissionId} AND refunded = false
       RETURNING account_id, key_id, month, units
    ), a AS (
      UPDATE account_usage u SET submissions = greatest(0, u.submissions - s.units)
        FROM s WHERE u.account_id = s.account_id AND u.month = s.month
       RETURNING 1
    ), k AS (
      UPDATE key_usage ku SET submissions = greatest(0, ku.submissions - s.units)
        FROM s WHERE ku.key_id = s.key_id AND ku.month = s.month
       RETURNING 1
    )
    SELECT (SELECT count(*) FROM s)::int AS refunded, (SELECT count(*) FROM a) AS a, (SELECT count(*) FROM k) AS k
  `.execute(trx);
  return (rows[0]?.refunded ?? 0) > 0;
}
