import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { RATE_WINDOW_MS } from '../limits.js';
import { monthOf, nextMonthStart } from '../util/clock.js';

// The usage record of GET /api/usage/ and `runbox-admin usage`, read from
// the same counters that admission moves, so it always equals what the limits see.

export interface UsageRecord {
  month: string;
  submissions: number;
  monthly_limit: number;
  remaining: number;
  resets_at: string;
  /** The plan's limit (not a current count; see `current`). */
  submissions_per_minute: number;
  /** The plan's limit of queued + running submissions. */
  pending_submissions: number;
  /** The plan's limit of runs at once. */
  running_submissions: number;
  /** Current counts behind the three limits above. */
  current: { submissions_last_minute: number; pending: number; running: number };
  key?: { submissions: number; monthly_limit: number | null; remaining: number | null };
}

export interface UsageQuery {
  accountId: string;
  /** Present when the call came with a key. */
  keyId?: string | null;
  now: Date;
  /** YYYY-MM; defaults to the month of `now`. */
  month?: string;
}

/**
 * The figures behind the rate-limit headers of run and usage answers: the rolling
 * minute and the monthly allowance, for the account and (when the call has one) its key.
 */
export interface RateFigures {
  perMinute: number;
  /** Submissions in the rolling minute, each test of a multi-test request counted. */
  lastMinute: number;
  /** The oldest of them: the window frees a slot when it is a minute old. */
  oldestInWindow: Date | null;
  monthlyLimit: number;
  used: number;
  keyLimit: number | null;
  keyUsed: number;
}

export async function usageRecord(db: Db, q: UsageQuery): Promise<UsageRecord | undefined> {
  return (await usageAndRate(db, q))?.record;
}

/** The usage record and the rate figures, from one read of the counters. */
export async function usageAndRate(db: Db, q: UsageQuery): Promise<{ record: UsageRecord; rate: RateFigures } | undefined> {
  const month = q.month ?? monthOf(q.now);
  const windowStart = new Date(q.now.getTime() - RATE_WINDOW_MS);
  const keyId = q.keyId ?? null;
  const { rows } = await sql<{
    monthly_limit: number;
    per_minute: number;
    pending_limit: number;
    running_limit: number;
    used: number;
    last_minute: number;
    oldest_in_window: Date | null;
    pending: number;
    running: number;
    key_used: number;
    key_limit: number | null;
  }>`
    SELECT coalesce(a.monthly_limit, p.monthly_limit) AS monthly_limit,
           coalesce(a.per_minute, p.per_minute) AS per_minute,
           coalesce(a.pending, p.pending) AS pending_limit,
           coalesce(a.running, p.running) AS running_limit,
           coalesce((SELECT u.submissions FROM account_usage u WHERE u.account_id = a.id AND u.month = ${month}), 0) AS used,
           w.n AS last_minute, w.oldest AS oldest_in_window,
           (SELECT count(*) FROM submissions s WHERE s.account_id = a.id AND s.state IN ('queued', 'running'))::int AS pending,
           (SELECT count(*) FROM submissions s WHERE s.account_id = a.id AND s.state = 'running')::int AS running,
           coalesce((SELECT k.submissions FROM key_usage k WHERE k.key_id = ${keyId} AND k.month = ${month}), 0) AS key_used,
           (SELECT k.monthly_limit FROM api_keys k WHERE k.id = ${keyId}) AS key_limit
      FROM accounts a JOIN plans p ON p.name = a.plan,
           -- Tests count toward the minute as toward the month (runbox_admit, migration 0013).
           LATERAL (SELECT coalesce(sum(s.units), 0)::int AS n, min(s.created_at) AS oldest FROM submissions s
                     WHERE s.account_id = a.id AND s.created_at > ${windowStart}) AS w
     WHERE a.id = ${q.accountId}
  `.execute(db);
  const r = rows[0];
  if (!r) return undefined;
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const record: UsageRecord = {
    month,
    submissions: r.used,
    monthly_limit: r.monthly_limit,
    remaining: Math.max(0, r.monthly_limit - r.used),
    resets_at: nextMonthStart(new Date(Date.UTC(year, mon - 1, 1))).toISOString(),
    submissions_per_minute: r.per_minute,
    pending_submissions: r.pending_limit,
    running_submissions: r.running_limit,
    current: { submissions_last_minute: r.last_minute, pending: r.pending, running: r.running },
  };
  if (keyId !== null) {
    record.key = {
      submissions: r.key_used,
      monthly_limit: r.key_limit,
      remaining: r.key_limit === null ? null : Math.max(0, r.key_limit - r.key_used),
    };
  }
  const rate: RateFigures = {
    perMinute: r.per_minute,
    lastMinute: r.last_minute,
    oldestInWindow: r.oldest_in_window === null ? null : new Date(r.oldest_in_window),
    monthlyLimit: r.monthly_limit,
    used: r.used,
    keyLimit: keyId === null ? null : r.key_limit,
    keyUsed: r.key_used,
  };
  return { record, rate };
}

/**
 * Runs admitted per UTC day of the month (refunded runs excluded), for the dashboard's
 * chart: the submissions still kept, plus the per-day totals the retention purge wrote
 * for those it deleted (in the same transaction as the delete, so one statement's
 * snapshot counts each run exactly once).
 */
export async function runsPerDay(db: Db, accountId: string, month: string): Promise<{ day: number; runs: number }[]> {
  const [year, mon] = month.split('-').map(Number) as [number, number];
  const first = new Date(Date.UTC(year, mon - 1, 1));
  const next = nextMonthStart(first);
  const { rows } = await sql<{ day: number; runs: number }>`
    SELECT day, sum(runs)::int AS runs FROM (
      SELECT extract(day FROM created_at AT TIME ZONE 'UTC')::int AS day, sum(units) AS runs
        FROM submissions
       -- The month's time range too: the (account_id, created_at) index reads that month only.
       WHERE account_id = ${accountId} AND month = ${month} AND NOT refunded
         AND created_at >= ${first} AND created_at < ${next}
       GROUP BY 1
      UNION ALL
      SELECT extract(day FROM d.day)::int, sum(d.runs)
        FROM usage_days d
       WHERE d.account_id = ${accountId} AND d.day >= ${first.toISOString().slice(0, 10)}::date AND d.day < ${next.toISOString().slice(0, 10)}::date
       GROUP BY 1
    ) x
    GROUP BY day HAVING sum(runs) > 0 ORDER BY day
  `.execute(db);
  return rows;
}
