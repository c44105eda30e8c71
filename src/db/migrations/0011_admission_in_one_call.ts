import { type Kysely, sql } from 'kysely';

// Admission in one call (src/quota/admit.ts): runbox_admit takes a batch of requests
// as JSON and, for each in turn, locks the account, reads the counts in a statement of
// its own (so under READ COMMITTED they see every admission committed before the lock
// was granted), applies the limits, and either returns the rejection or inserts the job, moves both
// usage counters, writes the usage emails the move calls for and notifies the runners;
// either way with the counts it read (the messages' figures and the rate-limit
// headers, src/quota/usage.ts RateFigures). One statement: one round trip
// and, for a whole batch, one commit. Rejections are rows, not errors, so one refused
// request never aborts the others of its batch.
//
// The batch is locked in account order, so two batches (and single admissions) always
// take account locks in the same order. Admissions of a waiting mode (p_waiting_modes,
// WAITING_MODES in src/quota/modes.ts: refused rather than queued when no slot is free)
// then take the one sync_capacity row (counting it up): the row lock makes two
// accounts' waiting admissions take turns on the deployment's last slot, inside the
// same call and without a separate lock statement.
//
// extra_params arrives as the client's JSON text and is stored as json (not jsonb,
// migration 0008), so results echo it unchanged; usage emails are written pending
// (migration 0009's defaults).
//
// api_keys changes notify runbox_keys with the key's hash in the changing transaction,
// so API processes drop their cached copy of the key (src/accounts/key-cache.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE sync_capacity (
      id        boolean PRIMARY KEY DEFAULT true CHECK (id),
      -- Waiting-mode admissions that reached the capacity check; each counts it up, which
      -- locks the row until its batch commits.
      checks    bigint NOT NULL DEFAULT 0
    );
    INSERT INTO sync_capacity DEFAULT VALUES;

    CREATE FUNCTION runbox_keys_notify() RETURNS trigger LANGUAGE plpgsql AS $fn$
    BEGIN
      -- A new key clears a cached 'no such key' answer; a changed one its cached entry.
      PERFORM pg_notify('runbox_keys', encode(CASE WHEN TG_OP = 'INSERT' THEN NEW.key_hash ELSE OLD.key_hash END, 'hex'));
      RETURN NULL;
    END
    $fn$;
    CREATE TRIGGER api_keys_notify AFTER INSERT OR UPDATE OR DELETE ON api_keys
      FOR EACH ROW EXECUTE FUNCTION runbox_keys_notify();

    -- p_thresholds: the usage email thresholds in percent (src/email/thresholds.ts,
    -- whose rule "from below ceil(limit * p / 100) to at or above it" is applied here).
    CREATE FUNCTION runbox_admit(p_reqs jsonb, p_thresholds integer[], p_waiting_modes text[])
    RETURNS TABLE (n integer, id uuid, reason text, monthly_limit integer, per_minute integer, pending_limit integer,
                   tests_per_request integer, running_limit integer, used integer, key_used integer, key_limit integer,
                   last_minute integer, oldest_in_window timestamptz, capacity integer)
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
          created_at timestamptz, window_start timestamptz, fresh_seconds integer)
        ORDER BY x.account, x.n
      LOOP
        n := r.n; id := NULL; reason := NULL; used := NULL; key_used := NULL; key_limit := NULL;
        last_minute := NULL; oldest_in_window := NULL; capacity := NULL;
        SELECT coalesce(a.monthly_limit, pl.monthly_limit), coalesce(a.per_minute, pl.per_minute),
               coalesce(a.pending, pl.pending), coalesce(a.tests_per_request, pl.tests_per_request),
               coalesce(a.running, pl.running), a.email
          INTO monthly_limit, per_minute, pending_limit, tests_per_request, running_limit, v_email
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
          FROM (SELECT count(*)::int AS cnt, min(s.created_at) AS oldest FROM submissions s
                 WHERE s.account_id = r.account AND s.created_at > r.window_start) AS w;

        IF r.units > tests_per_request THEN
          reason := 'too_many_tests';
        ELSIF used + r.units > monthly_limit THEN
          reason := 'monthly_limit';
        ELSIF key_limit IS NOT NULL AND key_used + r.units > key_limit THEN
          reason := 'key_monthly_limit';
        ELSIF last_minute + 1 > per_minute THEN
          reason := 'rate_limited';
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
    DROP TRIGGER api_keys_notify ON api_keys;
    DROP FUNCTION runbox_keys_notify();
    DROP TABLE sync_capacity;
  `.execute(db);
}
