import { type Kysely, sql } from 'kysely';

// submission_output.attempt: the attempt of the run whose runner wrote the chunk. A run
// taken over after a lost lease streams again from chunk 0 under its next attempt; the
// chunks are numbered per attempt (the key gains the attempt, or the second attempt's
// chunks would collide with the first's and be dropped), and readers keep the latest
// attempt's only. A runner of an earlier release writes no attempt: 1.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE submission_output ADD COLUMN attempt integer NOT NULL DEFAULT 1;
    ALTER TABLE submission_output DROP CONSTRAINT submission_output_pkey;
    ALTER TABLE submission_output ADD PRIMARY KEY (submission_id, attempt, seq);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DELETE FROM submission_output o WHERE o.attempt < (SELECT max(l.attempt) FROM submission_output l WHERE l.submission_id = o.submission_id);
    ALTER TABLE submission_output DROP CONSTRAINT submission_output_pkey;
    ALTER TABLE submission_output DROP COLUMN attempt;
    ALTER TABLE submission_output ADD PRIMARY KEY (submission_id, seq);
  `.execute(db);
}
