import { expect } from 'chai';
import { sql } from 'kysely';
import { migrateToLatest } from '../../src/db/migrate.js';
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
  });

  it('migrating again changes nothing', async () => {
    expect(await migrateToLatest(t.db)).to.deep.equal([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from plans`.execute(t.db);
    expect(rows[0]?.n).to.equal(1);
  });
});
