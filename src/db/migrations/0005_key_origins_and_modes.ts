import { type Kysely, sql } from 'kysely';

// Widget keys carry the browser origins they may be used from (enforced on the
// WebSocket), and submissions may arrive through the Piston and Judge0 compatible
// routes, recorded as modes of their own so the dashboard can tell them apart.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE api_keys ADD COLUMN allowed_origins text[] NOT NULL DEFAULT '{}'`.execute(db);
  await sql`ALTER TABLE submissions DROP CONSTRAINT submissions_mode_check`.execute(db);
  await sql`ALTER TABLE submissions ADD CONSTRAINT submissions_mode_check
              CHECK (mode IN ('async', 'sync', 'ws', 'piston', 'judge0'))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE submissions DROP CONSTRAINT submissions_mode_check`.execute(db);
  await sql`ALTER TABLE submissions ADD CONSTRAINT submissions_mode_check CHECK (mode IN ('async', 'sync', 'ws'))`.execute(db);
  await sql`ALTER TABLE api_keys DROP COLUMN allowed_origins`.execute(db);
}
