import { type Kysely, sql } from 'kysely';

// Admission (runbox_admit) notified runbox_jobs once per admitted run, with the run's id:
// Postgres then sends every listening runner host one message per run, and with a
// fleet of them that fan-out (hosts × runs) was PostgreSQL's largest cost per run. Runners
// do not read the payload (any notification means "claim"), so it becomes empty, and
// Postgres folds identical notifications of one transaction into one: a batch of
// admissions wakes each runner once. Only that statement of the function changes: its
// definition is read back, the one call replaced, and the result executed (the same
// signature, so a release still running the previous version calls it as before).

const BEFORE = `pg_notify('runbox_jobs', id::text)`;
const AFTER = `pg_notify('runbox_jobs', '')`;

async function swap(db: Kysely<unknown>, from: string, to: string): Promise<void> {
  await sql`
    DO $$
    DECLARE
      def text := pg_get_functiondef('runbox_admit(jsonb, integer[], text[])'::regprocedure);
    BEGIN
      IF position(${sql.lit(from)} IN def) = 0 THEN
        RAISE EXCEPTION 'runbox_admit does not call %', ${sql.lit(from)};
      END IF;
      EXECUTE replace(def, ${sql.lit(from)}, ${sql.lit(to)});
    END $$
  `.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await swap(db, BEFORE, AFTER);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await swap(db, AFTER, BEFORE);
}
