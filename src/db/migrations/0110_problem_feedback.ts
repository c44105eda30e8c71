import { type Kysely, sql } from 'kysely';

// Exercises with hidden tests. A problem's `feedback` says how much of a run's tests the
// people it is set for see (widget keys, student keys, other accounts judging a public
// problem): everything ('full', as before), the samples whole and the rest by verdict
// ('samples'), the first failing test ('first_failure'), or the verdict and score only
// ('verdict'). A `public` problem may be judged by any account's key. A key marked
// `student` sees its account's problems under their feedback.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE problems
              ADD COLUMN feedback text NOT NULL DEFAULT 'full' CHECK (feedback IN ('full', 'samples', 'first_failure', 'verdict')),
              ADD COLUMN public boolean NOT NULL DEFAULT false`.execute(db);
  await sql`CREATE INDEX problems_public ON problems (id) WHERE public AND deleted_at IS NULL`.execute(db);
  await sql`ALTER TABLE api_keys ADD COLUMN student boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE api_keys DROP COLUMN student`.execute(db);
  await sql`DROP INDEX problems_public`.execute(db);
  await sql`ALTER TABLE problems DROP COLUMN feedback, DROP COLUMN public`.execute(db);
}
