import { type Kysely, sql } from 'kysely';

// A stored problem version's tree of test groups (a Kattis package's data/ with its
// testdata.yaml or test_group.yaml settings: src/judge/groups.ts), by which the runner
// computes each group's verdict and score, and what the upload said of the package (its
// format, the keys read and ignored, its timing). Null: a problem without them (a JSON
// problem, a plain archive, or a version stored before).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_versions ADD COLUMN groups jsonb, ADD COLUMN package jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_versions DROP COLUMN groups, DROP COLUMN package`.execute(db);
}
