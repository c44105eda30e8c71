import { type Kysely, sql } from 'kysely';

// The grading list filters an account's submissions by the stored problem they ran
// (run_options.judge.problem.id), newest first: an index in that order, over judged
// runs of a problem only.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE INDEX submissions_account_problem ON submissions(account_id, ((run_options->'judge'->'problem'->>'id')), created_at)
      WHERE run_options->'judge'->'problem' IS NOT NULL
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX submissions_account_problem`.execute(db);
}
