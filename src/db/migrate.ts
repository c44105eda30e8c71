import { Migrator } from 'kysely';
import { FREE_PLAN, FREE_PLAN_NAME } from '../limits.js';
import type { Db } from './connect.js';
import { migrations } from './migrations/index.js';

/** Brings the schema up to date and makes sure the Free plan exists. Safe to run concurrently and repeatedly. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
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
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
