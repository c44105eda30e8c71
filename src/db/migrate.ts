import { Migrator, sql } from 'kysely';
import { FREE_PLAN, FREE_PLAN_NAME } from '../limits.js';
import type { Db } from './connect.js';
import { migrations } from './migrations/index.js';
import { ensureOnlineIndexes } from './online-indexes.js';

export interface MigrationOutcome {
  /** Migrations this call applied. */
  applied: string[];
  /** Migrations of a newer release already applied (this release runs against them as they are). */
  newer: string[];
  /** Indexes built concurrently after the migrations (src/db/online-indexes.ts). */
  indexes: string[];
}

/**
 * Migrations applied to the database that this release does not know: a newer release
 * migrated it. Migrations only expand while the previous release still serves (new
 * tables, columns with defaults, new functions; drops and renames come one release
 * later), so this release runs against them as they are, as long as its own are all
 * applied. Without this a process of the previous release restarting during a rolling
 * upgrade would refuse to start ("previously executed migration … is missing").
 */
async function newerMigrations(db: Db): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db).catch((err: { code?: string }) => {
    // No migration table yet: a new database.
    if (err.code === '42P01') return { rows: [] };
    throw err;
  });
  const done = new Set(rows.map((r) => r.name));
  const unknown = [...done].filter((name) => !(name in migrations)).sort();
  if (unknown.length === 0) return [];
  const missing = Object.keys(migrations).filter((name) => !done.has(name));
  if (missing.length > 0) {
    throw new Error(
      `the database has migrations of a newer release (${unknown.join(', ')}) but not this release's ${missing.join(', ')}: ` +
        'upgrade this host to the release that migrated the database',
    );
  }
  return unknown;
}

/** Brings the schema up to date and makes sure the Free plan exists. Safe to run concurrently and repeatedly. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  return (await migrate(db)).applied;
}

/** migrateToLatest, saying also what a newer release had applied and which indexes were built. */
export async function migrate(db: Db): Promise<MigrationOutcome> {
  const newer = await newerMigrations(db);
  let applied: string[] = [];
  if (newer.length === 0) {
    const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
    const { error, results } = await migrator.migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    applied = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  }
  await db
    .insertInto('plans')
    .values({
      name: FREE_PLAN_NAME,
      monthly_limit: FREE_PLAN.monthlyLimit,
      per_minute: FREE_PLAN.perMinute,
      pending: FREE_PLAN.pending,
      running: FREE_PLAN.running,
      tests_per_request: FREE_PLAN.testsPerRequest,
      sandbox_seconds_per_request: FREE_PLAN.sandboxSecondsPerRequest,
      problem_storage_bytes: FREE_PLAN.problemStorageBytes,
    })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const indexes = newer.length === 0 ? await ensureOnlineIndexes(db) : [];
  return { applied, newer, indexes };
}
