import { type Kysely, sql } from 'kysely';

// Admission's account lock and the counts it decides on, in one call (one round trip,
// plans kept by the session) instead of two statements. The counts are still read
// after the lock is granted: in a VOLATILE PL/pgSQL function every statement takes a
// new snapshot under READ COMMITTED, so they see every admission committed before the
// lock was granted (src/quota/admit.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION runbox_admission_snapshot(p_account bigint, p_key bigint, p_month text, p_window_start timestamptz)
    RETURNS TABLE (monthly_limit integer, per_minute integer, pending_limit integer, tests_per_request integer,
                   pending integer, last_minute integer, oldest_in_window timestamptz,
                   used integer, key_used integer, key_limit integer)
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      SELECT coalesce(a.monthly_limit, p.monthly_limit), coalesce(a.per_minute, p.per_minute),
             coalesce(a.pending, p.pending), coalesce(a.tests_per_request, p.tests_per_request)
        INTO monthly_limit, per_minute, pending_limit, tests_per_request
        FROM accounts a JOIN plans p ON p.name = a.plan
       WHERE a.id = p_account
         FOR UPDATE OF a;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      -- A statement of its own, after the lock: its snapshot is taken now.
      SELECT (SELECT count(*) FROM submissions s
               WHERE s.account_id = p_account AND s.state IN ('queued', 'running'))::int,
             w.n, w.oldest,
             coalesce((SELECT u.submissions FROM account_usage u WHERE u.account_id = p_account AND u.month = p_month), 0),
             coalesce((SELECT k.submissions FROM key_usage k WHERE k.key_id = p_key AND k.month = p_month), 0),
             (SELECT k.monthly_limit FROM api_keys k WHERE k.id = p_key)
        INTO pending, last_minute, oldest_in_window, used, key_used, key_limit
        FROM (SELECT count(*)::int AS n, min(s.created_at) AS oldest FROM submissions s
               WHERE s.account_id = p_account AND s.created_at > p_window_start) AS w;
      RETURN NEXT;
    END
    $fn$
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP FUNCTION runbox_admission_snapshot(bigint, bigint, text, timestamptz)`.execute(db);
}
