import { type Kysely, sql } from 'kysely';

// A stored test's arguments for its output validator (a Kattis package's testdata.yaml
// output_validator_flags, or test_group.yaml output_validator_args, of its group): given
// to a Kattis-convention validator after its feedback directory, or to the default
// validator as flags. Null: none.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_tests ADD COLUMN validator_args text[]`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problem_tests DROP COLUMN validator_args`.execute(db);
}
