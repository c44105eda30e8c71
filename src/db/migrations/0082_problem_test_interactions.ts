import { type Kysely, sql } from 'kysely';

// A sample test's interaction (a package's data/sample/NAME.interaction: the dialogue
// of an interactive or multi-pass problem's sample, lines starting < and >), shown with
// the problem; null: none. Small (at most a request's input), so kept in the row.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_tests ADD COLUMN interaction text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_tests DROP COLUMN interaction`.execute(db);
}
