import { type Kysely, sql } from 'kysely';

// What the Piston and Judge0 compatible routes bring that a plain run does not:
//  - submissions.run_options: files written beside the main source, arguments passed to
//    the program, and per-stage limits below the service's own (never above: the API
//    clamps them to src/limits.ts);
//  - submissions.callback: a per-submission callback target {url, method, format} that
//    replaces the key's redirect URL (Judge0's callback_url, delivered by PUT);
//  - submissions.compat: what a compatibility route keeps to answer in its own shape
//    (Judge0: the language id and expected_output);
//  - callback_deliveries.method and .format: how the sender delivers that target.
// The outbox trigger now also enqueues a delivery for any submission that names its
// own callback target, whatever its mode.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE submissions ADD COLUMN run_options jsonb;
    ALTER TABLE submissions ADD COLUMN callback jsonb;
    ALTER TABLE submissions ADD COLUMN compat jsonb;
    ALTER TABLE callback_deliveries ADD COLUMN method text NOT NULL DEFAULT 'POST' CHECK (method IN ('POST', 'PUT'));
    ALTER TABLE callback_deliveries ADD COLUMN format text NOT NULL DEFAULT 'runbox';

    CREATE OR REPLACE FUNCTION runbox_enqueue_callback() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delivery uuid;
      result jsonb;
      own_format text;
    BEGIN
      -- A job failed without a result (the reaper's final failure) still gets one.
      result := coalesce(NEW.result, jsonb_build_object(
        'id', NEW.id::text, 'compiler', NEW.compiler, 'status', 'internal_error',
        'output', '', 'error', 'the run could not be completed', 'exit_code', NULL, 'signal', NULL,
        'time', NULL, 'total', NULL, 'memory', NULL, 'truncated', false,
        'stdout_truncated', false, 'stderr_truncated', false, 'compile_output', NULL,
        'extra_params', NEW.extra_params));
      IF NEW.callback IS NOT NULL THEN
        own_format := coalesce(NEW.callback->>'format', 'runbox');
        INSERT INTO callback_deliveries (submission_id, key_id, url, method, format, payload)
        SELECT NEW.id, NEW.key_id, NEW.callback->>'url', coalesce(NEW.callback->>'method', 'POST'), own_format,
               -- Another format is rendered by the sender from the result and what the route kept.
               CASE WHEN own_format = 'runbox' THEN result
                    ELSE jsonb_build_object('result', result, 'compat', NEW.compat) END
         WHERE NEW.key_id IS NOT NULL
        RETURNING id INTO delivery;
      ELSIF NEW.mode = 'async' THEN
        INSERT INTO callback_deliveries (submission_id, key_id, url, payload)
        SELECT NEW.id, k.id, k.redirect_url, result
          FROM api_keys k
         WHERE k.id = NEW.key_id AND k.redirect_url IS NOT NULL AND k.redirect_url <> ''
        RETURNING id INTO delivery;
      END IF;
      IF delivery IS NOT NULL THEN
        PERFORM pg_notify('runbox_callbacks', delivery::text);
      END IF;
      RETURN NULL;
    END $$;

    DROP TRIGGER submissions_enqueue_callback ON submissions;
    -- Synchronous and WebSocket runs answer their caller directly; runs submitted to the
    -- asynchronous endpoint go to the key's redirect URL, and runs that name their own
    -- callback target go there.
    CREATE TRIGGER submissions_enqueue_callback
      AFTER UPDATE OF state ON submissions
      FOR EACH ROW
      WHEN (NEW.state IN ('finished', 'failed') AND OLD.state IS DISTINCT FROM NEW.state
            AND (NEW.mode = 'async' OR NEW.callback IS NOT NULL))
      EXECUTE FUNCTION runbox_enqueue_callback();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER submissions_enqueue_callback ON submissions;
    CREATE OR REPLACE FUNCTION runbox_enqueue_callback() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delivery uuid;
    BEGIN
      INSERT INTO callback_deliveries (submission_id, key_id, url, payload)
      SELECT NEW.id, k.id, k.redirect_url,
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
    CREATE TRIGGER submissions_enqueue_callback
      AFTER UPDATE OF state ON submissions
      FOR EACH ROW
      WHEN (NEW.state IN ('finished', 'failed') AND OLD.state IS DISTINCT FROM NEW.state AND NEW.mode = 'async')
      EXECUTE FUNCTION runbox_enqueue_callback();
    ALTER TABLE callback_deliveries DROP COLUMN format;
    ALTER TABLE callback_deliveries DROP COLUMN method;
    ALTER TABLE submissions DROP COLUMN compat;
    ALTER TABLE submissions DROP COLUMN callback;
    ALTER TABLE submissions DROP COLUMN run_options;
  `.execute(db);
}
