import { type Kysely, sql } from 'kysely';

// Batches (POST /api/v2/batches): up to BATCH_LIMITS.runsMax runs in one request, admitted
// as the account's limits free up, their results read back in the order they ended.
// Their runs are submissions of a mode of their own ('batch': no callback, claimed behind
// the other modes); an item's place in completion order is taken as its submission ends,
// by a trigger, in the same transaction, so each result is in the order exactly once.

/** The mode check with 'batch' added to whatever modes it lists (other migrations add theirs alike). */
const ADD_MODE = sql`
  DO $$
  DECLARE def text;
  BEGIN
    SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conname = 'submissions_mode_check' AND conrelid = 'submissions'::regclass;
    IF position('''batch''' IN def) = 0 THEN
      EXECUTE 'ALTER TABLE submissions DROP CONSTRAINT submissions_mode_check';
      EXECUTE 'ALTER TABLE submissions ADD CONSTRAINT submissions_mode_check ' || replace(def, 'ARRAY[', 'ARRAY[''batch''::text, ');
    END IF;
  END $$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await ADD_MODE.execute(db);
  await sql`
    CREATE TABLE batches (
      id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id         bigint NOT NULL REFERENCES accounts(id),
      key_id             bigint REFERENCES api_keys(id),
      total              integer NOT NULL CHECK (total >= 1),
      -- Items admitted (a submission stored) or refused for good (a refusal is its result).
      admitted           integer NOT NULL DEFAULT 0,
      -- Items ended: the last completion offset given.
      done               integer NOT NULL DEFAULT 0,
      -- Which API process admits its items now, until when (the feeder's lease).
      fed_until          timestamptz,
      fed_by             uuid,
      created_at         timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX batches_feeding ON batches(created_at) WHERE admitted < total;

    CREATE TABLE batch_items (
      batch_id           uuid NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
      seq                integer NOT NULL,
      -- The run as admission takes it (src/batches/store.ts).
      run                jsonb NOT NULL,
      -- Chosen here, so an item is admitted at most once whatever happens to its feeder.
      submission_id      uuid NOT NULL DEFAULT gen_random_uuid(),
      admitted           boolean NOT NULL DEFAULT false,
      -- Its place in completion order (1, 2, ...); NULL until it has ended.
      done_seq           integer,
      -- A refusal that no wait can change (monthly_limit, ...): the item's result.
      refusal            jsonb,
      PRIMARY KEY (batch_id, seq)
    );
    CREATE UNIQUE INDEX batch_items_submission ON batch_items(submission_id);
    CREATE INDEX batch_items_waiting ON batch_items(batch_id, seq) WHERE NOT admitted;
    CREATE UNIQUE INDEX batch_items_done ON batch_items(batch_id, done_seq) WHERE done_seq IS NOT NULL;

    CREATE FUNCTION runbox_batch_item_done() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      WITH item AS (SELECT batch_id, seq FROM batch_items WHERE submission_id = NEW.id AND done_seq IS NULL),
           counted AS (UPDATE batches b SET done = b.done + 1 FROM item WHERE b.id = item.batch_id RETURNING b.id, b.done)
      UPDATE batch_items i SET done_seq = counted.done FROM counted, item WHERE i.batch_id = counted.id AND i.seq = item.seq;
      RETURN NULL;
    END $$;
    CREATE TRIGGER submissions_batch_done AFTER UPDATE OF state ON submissions
      FOR EACH ROW WHEN (NEW.mode = 'batch' AND NEW.state IN ('finished', 'failed') AND OLD.state IS DISTINCT FROM NEW.state)
      EXECUTE FUNCTION runbox_batch_item_done();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER submissions_batch_done ON submissions;
    DROP FUNCTION runbox_batch_item_done();
    DROP TABLE batch_items, batches;
  `.execute(db);
  await sql`
    DO $$
    DECLARE def text;
    BEGIN
      SELECT pg_get_constraintdef(oid) INTO def FROM pg_constraint WHERE conname = 'submissions_mode_check' AND conrelid = 'submissions'::regclass;
      EXECUTE 'ALTER TABLE submissions DROP CONSTRAINT submissions_mode_check';
      EXECUTE 'ALTER TABLE submissions ADD CONSTRAINT submissions_mode_check ' || replace(def, '''batch''::text, ', '');
    END $$`.execute(db);
}
