import { type RawBuilder, sql } from 'kysely';

// The usage refund, as CTEs to splice into a transition's statement so that a job's
// move to 'failed' and its refund are one atomic step. `source` names an earlier CTE
// returning (account_id, key_id, month, units) of the jobs refunded now; callers
// guarantee each job appears there once (they flip `refunded` in the same statement,
// guarded by `NOT refunded`). The key counter is updated after the account counter
// (it reads the account CTE) to keep the lock order of admission.
export function refundCtes(source: string): RawBuilder<unknown> {
  const src = sql.table(source);
  return sql`
    account_refund AS (
      UPDATE account_usage u
      SET submissions = greatest(u.submissions - r.units, 0)
      FROM (SELECT account_id, month, sum(units)::int AS units FROM ${src} GROUP BY account_id, month) r
      WHERE u.account_id = r.account_id AND u.month = r.month
      RETURNING u.account_id
    ),
    key_refund AS (
      UPDATE key_usage u
      SET submissions = greatest(u.submissions - r.units, 0)
      FROM (SELECT key_id, month, sum(units)::int AS units FROM ${src} WHERE key_id IS NOT NULL GROUP BY key_id, month) r
      WHERE u.key_id = r.key_id AND u.month = r.month
        AND (SELECT count(*) FROM account_refund) >= 0
      RETURNING u.key_id
    )`;
}
