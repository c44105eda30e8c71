import { type Kysely, sql } from 'kysely';

// submission_input: what the caller of an interactive WebSocket run types while it runs,
// chunk by chunk, numbered per submission, with an end-of-input marker. The API host
// stores and notifies each chunk (NOTIFY runbox_input); the runner running the job
// forwards them to the program's stdin in order, and reads back what it missed (a chunk
// sent before the job started, or while its LISTEN connection was down). Unlogged and
// kept briefly, as submission_output.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE UNLOGGED TABLE submission_input (
      submission_id      uuid NOT NULL,
      seq                integer NOT NULL,
      data               text NOT NULL,
      -- The end of input: the program's stdin closes (data then empty).
      eof                boolean NOT NULL DEFAULT false,
      created_at         timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (submission_id, seq)
    );
    CREATE INDEX submission_input_created ON submission_input(created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE submission_input`.execute(db);
}
