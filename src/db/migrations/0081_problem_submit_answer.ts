import { type Kysely, sql } from 'kysely';

// A submit-answer problem's version (the ICPC format's type: submit-answer, CMS's
// output-only tasks): a submission is the answer files, one per test, each judged by
// the version's validator; no program is built or run (src/runner/answers.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_versions ADD COLUMN submit_answer boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_versions DROP COLUMN submit_answer`.execute(db);
}
