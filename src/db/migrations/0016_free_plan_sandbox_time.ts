import { type Kysely, sql } from 'kysely';

// The Free plan's sandbox time per request goes from 120 s to 330 s: a compile stage and
// its 10 tests at the 30 s timeout. At 120 s the plan's advertised 10 tests per request
// were 4 at most (3 after a compile), since the native API has no lower timeout to ask
// for. Only a Free plan still at the old figure moves; one an operator changed keeps
// its own.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE plans SET sandbox_seconds_per_request = 330 WHERE name = 'free' AND sandbox_seconds_per_request = 120`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`UPDATE plans SET sandbox_seconds_per_request = 120 WHERE name = 'free' AND sandbox_seconds_per_request = 330`.execute(db);
}
