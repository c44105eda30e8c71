import { type Kysely, sql } from 'kysely';

// Tests count toward the rolling minute as they do toward the month, and a request's
// sandbox time is bounded by a plan figure.
//
// - runbox_admit counts the rolling minute in tests (submissions.units), not requests:
//   a 10-test request takes 10 of the minute's allowance, and one whose tests exceed
//   what is left of it is refused whole (a request of more tests than the minute holds
//   could never pass, so it is refused as too many tests). A refusal also answers when
//   enough of the window will have left it (window_frees_at) for Retry-After.
// - plans.sandbox_seconds_per_request (and the per-account override in accounts): the
//   most sandbox time one request may ask for, its compile stage's timeout plus tests x
//   its run stage's timeout, as the caller works it out (sandbox_ms in each request;
//   src/limits.ts requestSandboxMs). More is refused (too_much_sandbox_time) before any
//   other limit, nothing billed. The Free plan gets 120 s; a plan made before this
//   migration keeps room for every request it allowed (a compile and its tests at the
//   30 s timeout).
//
// The previous runbox_admit stays, renamed, so down restores it exactly.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE plans ADD COLUMN sandbox_seconds_per_request integer NOT NULL DEFAULT 120 CHECK (sandbox_seconds_per_request >= 1);
    UPDATE plans SET sandbox_seconds_per_request = greatest(120, 30 + 30 * tests_per_request) WHERE name <> 'free';
    ALTER TABLE accounts ADD COLUMN sandbox_seconds_per_request integer CHECK (sandbox_seconds_per_request >= 1);

    ALTER FUNCTION runbox_admit(jsonb, integer[], text[]) RENAME TO runbox_admit_0011;

    CREATE FUNCTION runbox_admit(p_reqs jsonb, p_thresholds integer[], p_waiting_modes text[])
    RETURNS TABLE (n integer, id uuid, reason text, monthly_limit integer, per_minute integer, pending_limit integer,
                   tests_per_request integer, running_limit integer, used integer, key_used integer, key_limit integer,
                   last_minute integer, oldest_in_window timestamptz, capacity integer,
                   sandbox_seconds integer, window_frees_at timestamptz)
    LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      r record;
      v_email text;
      v_revoked boolean;
      v_pending integer;
      v_running_now integer;
      v_queued_interactive integer;
      v_busy integer;
      v_mail boolean := false;
      v_written integer;
      p integer;
    BEGIN
      FOR r IN
        SELECT * FROM jsonb_to_recordset(p_reqs) AS x(n integer, account bigint, key bigint, id uuid, compiler text, code text,
          input text, tests jsonb, extra text, run_options jsonb, callback jsonb, compat jsonb, mode text, waiting boolean, priority smallint, units integer, month text, max_attempts integer,
          created_at timestamptz, window_start timestamptz, fresh_seconds integer, sandbox_ms bigint)
        ORDER BY x.account, x.n
      LOOP
        n := r.n; id := NULL; reason := NULL; used := NULL; key_used := NULL; key_limit := NULL;
        last_minute := NULL; oldest_in_window := NULL; capacity := NULL; window_frees_at := NULL;
        SELECT coalesce(a.monthly_limit, pl.monthly_limit), coalesce(a.per_minute, pl.per_minute),
               coalesce(a.pending, pl.pending), coalesce(a.tests_per_request, pl.tests_per_request),
               coalesce(a.running, pl.running),
               coalesce(a.sandbox_seconds_per_request, pl.sandbox_seconds_per_request), a.email
          INTO monthly_limit, per_minute, pending_limit, tests_per_request, running_limit, sandbox_seconds, v_email
          FROM accounts a JOIN plans pl ON pl.name = a.plan
         WHERE a.id = r.account
           FOR UPDATE OF a;
        IF NOT FOUND THEN
          reason := 'no_account';
          RETURN NEXT;
          CONTINUE;
        END IF;
        -- Statements of their own, after the lock: their snapshots are taken now.
        v_revoked := false;
        IF r.key IS NOT NULL THEN
          SELECT k.monthly_limit, k.revoked_at IS NOT NULL INTO key_limit, v_revoked FROM api_keys k WHERE k.id = r.key;
        END IF;
        IF v_revoked THEN
          reason := 'revoked_key';
          RETURN NEXT;
          CONTINUE;
        END IF;
        SELECT (SELECT count(*) FROM submissions s
                 WHERE s.account_id = r.account AND s.state IN ('queued', 'running'))::int,
               w.cnt, w.oldest,
               coalesce((SELECT u.submissions FROM account_usage u WHERE u.account_id = r.account AND u.month = r.month), 0),
               coalesce((SELECT k.submissions FROM key_usage k WHERE k.key_id = r.key AND k.month = r.month), 0)
          INTO v_pending, last_minute, oldest_in_window, used, key_used
          FROM (SELECT coalesce(sum(s.units), 0)::int AS cnt, min(s.created_at) AS oldest FROM submissions s
                 WHERE s.account_id = r.account AND s.created_at > r.window_start) AS w;

        -- More tests than the minute allows could never be admitted: refused like too many tests.
        IF r.units > tests_per_request OR r.units > per_minute THEN
          reason := 'too_many_tests';
        ELSIF r.sandbox_ms > sandbox_seconds * 1000::bigint THEN
          reason := 'too_much_sandbox_time';
        ELSIF used + r.units > monthly_limit THEN
          reason := 'monthly_limit';
        ELSIF key_limit IS NOT NULL AND key_used + r.units > key_limit THEN
          reason := 'key_monthly_limit';
        ELSIF last_minute + r.units > per_minute THEN
          reason := 'rate_limited';
          -- When enough of the window's tests have left it for this request's: the
          -- submission whose leaving brings the running total to what must go.
          SELECT w.created_at INTO window_frees_at
            FROM (SELECT s.created_at, sum(s.units) OVER (ORDER BY s.created_at, s.id) AS gone FROM submissions s
                   WHERE s.account_id = r.account AND s.created_at > r.window_start) AS w
           WHERE w.gone >= last_minute + r.units - per_minute
           ORDER BY w.created_at LIMIT 1;
        ELSIF v_pending + 1 > pending_limit THEN
          reason := 'too_many_pending';
        ELSIF r.waiting THEN
          -- The account's running jobs plus its queued waiting jobs (they take the
          -- next free slots) against its runs-at-once limit; running_now is moved by the
          -- queue's transitions on the row locked above.
          SELECT a.running_now,
                 (SELECT count(*) FROM submissions s
                   WHERE s.account_id = a.id AND s.state = 'queued' AND s.mode = ANY(p_waiting_modes))::int
            INTO v_running_now, v_queued_interactive
            FROM accounts a WHERE a.id = r.account;
          IF v_running_now + v_queued_interactive >= running_limit THEN
            reason := 'too_many_running';
          ELSE
            UPDATE sync_capacity SET checks = checks + 1;
            SELECT coalesce((SELECT sum(rn.slots) FROM runners rn
                              WHERE rn.stopped_at IS NULL AND rn.last_seen > now() - make_interval(secs => r.fresh_seconds)), 0)::int,
                   (SELECT count(*) FROM submissions s
                     WHERE s.state = 'running' OR (s.state = 'queued' AND s.mode = ANY(p_waiting_modes)))::int
              INTO capacity, v_busy;
            IF v_busy >= capacity THEN
              reason := 'capacity';
            END IF;
          END IF;
        END IF;
        IF reason IS NOT NULL THEN
          RETURN NEXT;
          CONTINUE;
        END IF;

        INSERT INTO submissions (id, priority, account_id, key_id, compiler, code, input, tests, extra_params, run_options, callback,
                                 compat, mode, units, month, max_attempts, created_at)
        VALUES (coalesce(r.id, gen_random_uuid()), r.priority, r.account, r.key, r.compiler, r.code, r.input,
                nullif(r.tests, 'null'::jsonb), r.extra::json, nullif(r.run_options, 'null'::jsonb),
                nullif(r.callback, 'null'::jsonb), nullif(r.compat, 'null'::jsonb), r.mode, r.units, r.month, r.max_attempts,
                r.created_at)
        RETURNING submissions.id INTO id;
        INSERT INTO account_usage (account_id, month, submissions) VALUES (r.account, r.month, r.units)
          ON CONFLICT (account_id, month) DO UPDATE SET submissions = account_usage.submissions + excluded.submissions;
        IF r.key IS NOT NULL THEN
          INSERT INTO key_usage (key_id, month, submissions) VALUES (r.key, r.month, r.units)
            ON CONFLICT (key_id, month) DO UPDATE SET submissions = key_usage.submissions + excluded.submissions;
        END IF;
        -- Usage emails at the thresholds this admission reaches (written once: ON CONFLICT DO
        -- NOTHING). Accounts without an address (marketplace subscribers, who hear from
        -- the marketplace) get none.
        FOREACH p IN ARRAY (CASE WHEN v_email IS NULL THEN '{}'::integer[] ELSE p_thresholds END) LOOP
          IF monthly_limit > 0 AND used < ceil(monthly_limit * p / 100.0) AND used + r.units >= ceil(monthly_limit * p / 100.0) THEN
            INSERT INTO usage_emails (account_id, key_id, month, threshold, used, monthly_limit, to_address)
              VALUES (r.account, NULL, r.month, p, used + r.units, monthly_limit, v_email) ON CONFLICT DO NOTHING;
            GET DIAGNOSTICS v_written = ROW_COUNT;
            v_mail := v_mail OR v_written > 0;
          END IF;
          IF r.key IS NOT NULL AND key_limit > 0 AND key_used < ceil(key_limit * p / 100.0)
             AND key_used + r.units >= ceil(key_limit * p / 100.0) THEN
            INSERT INTO usage_emails (account_id, key_id, month, threshold, used, monthly_limit, to_address)
              VALUES (r.account, r.key, r.month, p, key_used + r.units, key_limit, v_email) ON CONFLICT DO NOTHING;
            GET DIAGNOSTICS v_written = ROW_COUNT;
            v_mail := v_mail OR v_written > 0;
          END IF;
        END LOOP;
        -- Delivered to runners and mailers only when the batch commits.
        PERFORM pg_notify('runbox_jobs', id::text);
        RETURN NEXT;
      END LOOP;
      IF v_mail THEN
        PERFORM pg_notify('runbox_mail', '');
      END IF;
    END
    $fn$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP FUNCTION runbox_admit(jsonb, integer[], text[]);
    ALTER FUNCTION runbox_admit_0011(jsonb, integer[], text[]) RENAME TO runbox_admit;
    ALTER TABLE accounts DROP COLUMN sandbox_seconds_per_request;
    ALTER TABLE plans DROP COLUMN sandbox_seconds_per_request;
  `.execute(db);
}
