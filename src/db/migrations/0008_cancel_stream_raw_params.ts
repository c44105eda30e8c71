import { type Kysely, sql } from 'kysely';

// - submissions.cancelled_at: the caller of a synchronous or WebSocket run went away;
//   the runner holding it stops the run (NOTIFY runbox_cancel).
// - submissions.extra_params as json, not jsonb: json keeps the text as sent (key
//   order included), which results echo.
// - submission_output: the live output of WebSocket runs, chunk by chunk, so an API
//   host whose LISTEN connection dropped can replay what it missed. Unlogged: it is
//   transient (kept briefly after the run ends) and need not survive a crash.
// - runners.pid: a runner starting on a host can tell that an earlier runner on the
//   same host is gone and requeue its jobs at once.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE submissions ADD COLUMN cancelled_at timestamptz;
    ALTER TABLE submissions ALTER COLUMN extra_params TYPE json USING extra_params::json;
    ALTER TABLE runners ADD COLUMN pid integer;
    CREATE UNLOGGED TABLE submission_output (
      submission_id      uuid NOT NULL,
      seq                integer NOT NULL,
      -- stdout or stderr; NULL for the end marker (data then empty).
      stream             text CHECK (stream IN ('stdout', 'stderr')),
      data               text NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (submission_id, seq)
    );
    CREATE INDEX submission_output_created ON submission_output(created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE submission_output;
    ALTER TABLE runners DROP COLUMN pid;
    ALTER TABLE submissions ALTER COLUMN extra_params TYPE jsonb USING extra_params::jsonb;
    ALTER TABLE submissions DROP COLUMN cancelled_at;
  `.execute(db);
}
