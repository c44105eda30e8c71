import { type Kysely, sql } from 'kysely';

// Accounts of API-marketplace subscribers: named after the marketplace's user, made on
// their first call, with no email (and so no portal log-in and no usage emails). The
// unique index is what makes the first-call upsert race-safe across API processes.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE accounts ALTER COLUMN email DROP NOT NULL`.execute(db);
  await sql`ALTER TABLE accounts ADD COLUMN marketplace_user text`.execute(db);
  await sql`CREATE UNIQUE INDEX accounts_marketplace_user_key ON accounts (marketplace_user)`.execute(db);
  await sql`ALTER TABLE accounts ADD CONSTRAINT accounts_email_or_marketplace_user
              CHECK (email IS NOT NULL OR marketplace_user IS NOT NULL)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM accounts WHERE email IS NULL`.execute(db);
  await sql`ALTER TABLE accounts DROP CONSTRAINT accounts_email_or_marketplace_user`.execute(db);
  await sql`DROP INDEX accounts_marketplace_user_key`.execute(db);
  await sql`ALTER TABLE accounts DROP COLUMN marketplace_user`.execute(db);
  await sql`ALTER TABLE accounts ALTER COLUMN email SET NOT NULL`.execute(db);
}
