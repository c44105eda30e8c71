import { sql } from 'kysely';
import type { Db } from './connect.js';

// Indexes on tables that grow large (submissions), built after the migrations with
// CREATE INDEX CONCURRENTLY: a plain CREATE INDEX inside a migration's transaction would
// hold off every insert and update of the table for the whole build (seconds per million
// rows), which is an outage for a service still serving while it upgrades. CONCURRENTLY
// cannot run in a transaction, so these are not migrations; each is named and made
// idempotently, and its migration's down drops it.
//
// Every process runs this at start. No lock is held across the statements (a session lock
// would not survive PgBouncer's transaction pooling): an index valid already is left
// alone, one another process is building now (pg_stat_progress_create_index) too, and
// one left invalid by a build that was cut short is dropped and built again.

export interface OnlineIndex {
  name: string;
  /** The CREATE INDEX CONCURRENTLY statement's text after the name. */
  on: string;
}

export const ONLINE_INDEXES: OnlineIndex[] = [
  // The retention purge takes the oldest submissions first (migration 0030).
  { name: 'submissions_created', on: 'ON submissions (created_at)' },
];

/** Builds the indexes that are missing or invalid; returns the names built. */
export async function ensureOnlineIndexes(db: Db, indexes: OnlineIndex[] = ONLINE_INDEXES): Promise<string[]> {
  const built: string[] = [];
  for (const index of indexes) {
    if (!/^[a-z_][a-z0-9_]*$/.test(index.name)) throw new Error(`bad index name ${index.name}`);
    const { rows } = await sql<{ valid: boolean; building: boolean }>`
      SELECT i.indisvalid AS valid,
             EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid) AS building
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = ${index.name} AND c.relnamespace = current_schema()::regnamespace
    `.execute(db);
    const found = rows[0];
    if (found && (found.valid || found.building)) continue;
    if (found) await sql.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`).execute(db);
    try {
      await sql.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${index.name} ${index.on}`).execute(db);
    } catch (err) {
      // Another process began the same build a moment earlier.
      if ((err as { code?: string }).code === '42P07') continue;
      throw err;
    }
    built.push(index.name);
  }
  return built;
}
