import { type Kysely, sql } from 'kysely';

// runners.claim_turns counts the claims of a runner that had an account share to keep
// (src/queue/claim.ts): each such claim that picked jobs moves it on by one, only from
// the value its snapshot saw. Two of a runner's slots claiming at the same instant both read the same
// value; the second to take the row finds it moved and claims nothing (and claims
// again), so no snapshot that misses the other's claim can take a job over the share.
// A release still running ignores the column.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runners ADD COLUMN claim_turns bigint NOT NULL DEFAULT 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runners DROP COLUMN claim_turns`.execute(db);
}
