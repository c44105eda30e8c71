import { type Kysely, sql } from 'kysely';

// The callback outbox: one delivery per finished or failed asynchronous submission
// whose key has a redirect URL, and the priority that lets synchronous and WebSocket
// jobs go first.
//
// The delivery is written by a trigger rather than in the queue's statements: every
// transition that ends a job (complete, fail, the reaper's final failure, and any
// added later) then writes it in the same transaction as the job's end, with no
// copy of the outbox insert in each statement to keep in step. The trigger also
// notifies the senders; the notification is delivered when that transaction commits.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE callback_deliveries (
      id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      submission_id      uuid NOT NULL REFERENCES submissions(id),
      key_id             bigint NOT NULL REFERENCES api_keys(id),
      -- The key's redirect URL when the run ended.
      url                text NOT NULL,
      -- The result as delivered (the one result shape).
      payload            jsonb NOT NULL,
      state              text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
      -- Attempts made so far; the sender's RUNBOX_CALLBACK_MAX_ATTEMPTS decides when it is dead.
      attempts           integer NOT NULL DEFAULT 0,
      run_at             timestamptz NOT NULL DEFAULT now(),
      locked_by          text,
      lease_expires_at   timestamptz,
      last_status        integer,
      last_error         text,
      created_at         timestamptz NOT NULL DEFAULT now(),
      updated_at         timestamptz NOT NULL DEFAULT now(),
      delivered_at       timestamptz
    );
    CREATE INDEX callback_deliveries_due ON callback_deliveries(run_at) WHERE state = 'pending';
    CREATE INDEX callback_deliveries_submission ON callback_deliveries(submission_id, created_at);

    CREATE FUNCTION runbox_enqueue_callback() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delivery uuid;
    BEGIN
      INSERT INTO callback_deliveries (submission_id, key_id, url, payload)
      SELECT NEW.id, k.id, k.redirect_url,
             -- A job failed without a result (the reaper's final failure) still gets one.
             coalesce(NEW.result, jsonb_build_object(
               'id', NEW.id::text, 'compiler', NEW.compiler, 'status', 'internal_error',
               'output', '', 'error', 'the run could not be completed', 'exit_code', NULL, 'signal', NULL,
               'time', NULL, 'total', NULL, 'memory', NULL, 'truncated', false,
               'stdout_truncated', false, 'stderr_truncated', false, 'compile_output', NULL,
               'extra_params', NEW.extra_params))
        FROM api_keys k
       WHERE k.id = NEW.key_id AND k.redirect_url IS NOT NULL AND k.redirect_url <> ''
      RETURNING id INTO delivery;
      IF delivery IS NOT NULL THEN
        PERFORM pg_notify('runbox_callbacks', delivery::text);
      END IF;
      RETURN NULL;
    END $$;

    -- Synchronous and WebSocket runs answer their caller directly; only runs submitted
    -- to the asynchronous endpoint are delivered to the callback URL.
    CREATE TRIGGER submissions_enqueue_callback
      AFTER UPDATE OF state ON submissions
      FOR EACH ROW
      WHEN (NEW.state IN ('finished', 'failed') AND OLD.state IS DISTINCT FROM NEW.state AND NEW.mode = 'async')
      EXECUTE FUNCTION runbox_enqueue_callback();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER submissions_enqueue_callback ON submissions;
    DROP FUNCTION runbox_enqueue_callback();
    DROP TABLE callback_deliveries;
  `.execute(db);
}
