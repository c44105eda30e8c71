import { expect } from 'chai';
import { Migrator, sql } from 'kysely';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { FREE_PLAN } from '../../src/limits.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

describe('database', () => {
  let t: TestDatabase;
  before(async () => {
    t = await freshDatabase('database');
  });
  after(async () => {
    await t?.drop();
  });

  it('migrates to the latest schema with the Free plan from src/limits.ts', async () => {
    const plan = await t.db.selectFrom('plans').selectAll().where('name', '=', 'free').executeTakeFirstOrThrow();
    expect(plan.monthly_limit).to.equal(FREE_PLAN.monthlyLimit);
    expect(plan.per_minute).to.equal(FREE_PLAN.perMinute);
    expect(plan.pending).to.equal(FREE_PLAN.pending);
    expect(plan.running).to.equal(FREE_PLAN.running);
    expect(plan.sandbox_seconds_per_request).to.equal(FREE_PLAN.sandboxSecondsPerRequest);
  });

  it('sandbox seconds per request: down restores the previous admission exactly; up gives plans made before it room for every request they allowed', async () => {
    const migrator = new Migrator({ db: t.db, provider: { getMigrations: async () => migrations } });
    const mine = '0013_tests_per_minute_and_sandbox_time';
    const names = Object.keys(migrations).sort();
    const down = await migrator.migrateTo(names[names.indexOf(mine) - 1]!);
    expect(down.error).to.equal(undefined);
    expect(down.results?.map((r) => r.migrationName)).to.include(mine);
    const columns = async () =>
      (await sql<{ out: string }>`SELECT pg_get_function_result('runbox_admit(jsonb, integer[], text[])'::regprocedure) AS out`.execute(t.db)).rows[0]!.out;
    expect(await columns()).to.not.contain('sandbox_seconds');
    await sql`INSERT INTO plans (name, monthly_limit, per_minute, pending, running, tests_per_request) VALUES ('pro', 1000, 100, 8, 2, 50), ('lite', 1000, 10, 8, 2, 2)`.execute(t.db);
    expect(await migrateToLatest(t.db)).to.include(mine);
    expect(await columns()).to.contain('sandbox_seconds integer');
    const plans = await t.db.selectFrom('plans').select(['name', 'sandbox_seconds_per_request']).orderBy('name').execute();
    expect(plans).to.deep.equal([
      { name: 'free', sandbox_seconds_per_request: FREE_PLAN.sandboxSecondsPerRequest },
      { name: 'lite', sandbox_seconds_per_request: 120 },
      { name: 'pro', sandbox_seconds_per_request: 30 + 50 * 30 },
    ]);
    await t.db.deleteFrom('plans').where('name', 'in', ['pro', 'lite']).execute();
  });

  it('migrating again changes nothing', async () => {
    expect(await migrateToLatest(t.db)).to.deep.equal([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from plans`.execute(t.db);
    expect(rows[0]?.n).to.equal(1);
  });
});
