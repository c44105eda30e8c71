import { type Kysely, sql } from 'kysely';

// The Jobe-compatible route (src/compat/jobe): its file cache, where a client such as
// Moodle's CodeRunner PUTs support files under ids it chooses and names them in later
// runs. Kept per account (one account's ids never reach another's), bounded in count
// and bytes by the route, and a cache as Jobe's is: a file unused for a day may go.
// Its runs are recorded as a mode of their own, as the other compatible routes' are.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE jobe_files (
      account_id  bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      file_id     text NOT NULL,
      content     bytea NOT NULL,
      size        integer NOT NULL,
      used_at     timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (account_id, file_id)
    )`.execute(db);
  await sql`ALTER TABLE submissions DROP CONSTRAINT submissions_mode_check`.execute(db);
  await sql`ALTER TABLE submissions ADD CONSTRAINT submissions_mode_check
              CHECK (mode IN ('async', 'sync', 'ws', 'piston', 'judge0', 'jobe'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE submissions DROP CONSTRAINT submissions_mode_check`.execute(db);
  await sql`ALTER TABLE submissions ADD CONSTRAINT submissions_mode_check
              CHECK (mode IN ('async', 'sync', 'ws', 'piston', 'judge0'))`.execute(db);
  await sql`DROP TABLE jobe_files`.execute(db);
}
