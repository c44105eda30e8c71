import { type Kysely, sql } from 'kysely';

// Problem writes (create, replace, delete; API and portal) an account made, for the
// per-minute bound on them: each write may inflate, hash and store up to 64 MiB.
// Counted in PostgreSQL so every API host agrees; rows past the window are deleted by
// the next write of the account.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE problem_writes (
      account_id         bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      at                 timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX problem_writes_account ON problem_writes(account_id, at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE problem_writes`.execute(db);
}
