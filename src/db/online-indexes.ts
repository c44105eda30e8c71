import { sql } from 'kysely';
import type { Db } from './connect.js';

// Indexes on tables that grow large (submissions), built after the migrations with
// CREATE INDEX CONCURRENTLY: a plain CREATE INDEX inside a migration's transaction would
// hold off every insert and update of the table for the whole build (seconds per million
// rows), which is an outage for a service still serving while it upgrades. CONCURRENTLY
// cannot run in a transaction, so these are not migrations; each is named and made
// idempotently, and its migration's down drops it.
//
// Every process runs this at start, one at a time (a session advisory lock): the first
// builds, the others find the index valid. A build that was interrupted leaves an
// invalid index behind, which is dropped and built again.

export interface OnlineIndex {
  name: string;
  /** The CREATE INDEX CONCURRENTLY statement's text after the name. */
  on: string;
}

export const ONLINE_INDEXES: OnlineIndex[] = [
  // The retention purge takes the oldest submissions first (migration 0030).
  { name: 'submissions_created', on: 'ON submissions (created_at)' },
];

/** Arbitrary but fixed, beside the reaper's one-key lock (src/queue/reap.ts). */
const BUILD_LOCK = 7_316_002;

/** Builds the indexes that are missing or invalid; returns the names built. */
export async function ensureOnlineIndexes(db: Db, indexes: OnlineIndex[] = ONLINE_INDEXES): Promise<string[]> {
  const built: string[] = [];
  // One session for the lock and the builds: a session lock is held by its connection.
  await db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${BUILD_LOCK})`.execute(conn);
    try {
      for (const index of indexes) {
        if (!/^[a-z_][a-z0-9_]*$/.test(index.name)) throw new Error(`bad index name ${index.name}`);
        const { rows } = await sql<{ valid: boolean }>`
          SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
          WHERE c.relname = ${index.name} AND c.relnamespace = current_schema()::regnamespace
        `.execute(conn);
        if (rows[0]?.valid) continue;
        if (rows[0]) await sql.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`).execute(conn);
        await sql.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index.name} ${index.on}`).execute(conn);
        built.push(index.name);
      }
    } finally {
      await sql`SELECT pg_advisory_unlock(${BUILD_LOCK})`.execute(conn);
    }
  });
  return built;
}
