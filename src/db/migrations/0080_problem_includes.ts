import { type Kysely, sql } from 'kysely';

// A problem version's included files (a package's include/<language>/ and
// include/default/: a function problem's grader or stub), by the package format's
// language code, each a list of {name, content_base64}; null: none. Copied over a
// submission in that language before it is built (src/problems/include.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_versions ADD COLUMN include jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_versions DROP COLUMN include`.execute(db);
}
