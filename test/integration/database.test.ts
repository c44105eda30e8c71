import { join } from 'node:path';
import { expect } from 'chai';
import { execa } from 'execa';
import { Migrator, sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.js';
import { EmailTakenError } from '../../src/accounts/errors.js';
import { issueToken, peekToken } from '../../src/accounts/tokens.js';
import { migrate, migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { FREE_PLAN } from '../../src/limits.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
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

  it('runs against a schema a newer release migrated (expand-only), and refuses one that skipped its own migrations', async () => {
    const u = await freshDatabase('database_newer');
    try {
      await sql`INSERT INTO kysely_migration (name, timestamp) VALUES ('9999_from_a_newer_release', now())`.execute(u.db);
      expect(await migrate(u.db)).to.deep.equal({ applied: [], newer: ['9999_from_a_newer_release'], indexes: [] });
      // A database a newer release migrated without this release's last migration is not one this release can serve.
      const last = Object.keys(migrations).sort().at(-1)!;
      await sql`DELETE FROM kysely_migration WHERE name = ${last}`.execute(u.db);
      let err: unknown;
      await migrate(u.db).catch((e: unknown) => (err = e));
      expect(String(err)).to.include(`the database has migrations of a newer release (9999_from_a_newer_release) but not this release's ${last}`);
    } finally {
      await u.drop();
    }
  });

  it('builds the indexes of large tables concurrently after the migrations, and again when a build was cut short', async () => {
    const valid = async () =>
      (await sql<{ valid: boolean }>`SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = 'submissions_created'`.execute(t.db)).rows;
    expect(await valid()).to.deep.equal([{ valid: true }]);
    expect((await migrate(t.db)).indexes).to.deep.equal([]);
    // A CREATE INDEX CONCURRENTLY that fails part way leaves the index behind, invalid (here
    // a unique one over two equal times): it is dropped and built again.
    await sql`DROP INDEX submissions_created`.execute(t.db);
    const account = await createAccount(t.db, 'twice@example.com');
    const at = new Date('2026-01-01T00:00:00Z');
    for (let i = 0; i < 2; i++) {
      await t.db.insertInto('submissions').values({ account_id: account.id, compiler: 'python-3.9.7', code: '', month: '2026-01', created_at: at }).execute();
    }
    let failed: unknown;
    await sql`CREATE UNIQUE INDEX CONCURRENTLY submissions_created ON submissions (created_at)`.execute(t.db).catch((e: unknown) => (failed = e));
    expect(String(failed)).to.include('could not create unique index');
    expect(await valid()).to.deep.equal([{ valid: false }]);
    expect((await migrate(t.db)).indexes).to.deep.equal(['submissions_created']);
    expect(await valid()).to.deep.equal([{ valid: true }]);
    await t.db.deleteFrom('submissions').where('account_id', '=', account.id).execute();
  });

  it('migrating again changes nothing', async () => {
    expect(await migrateToLatest(t.db)).to.deep.equal([]);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from plans`.execute(t.db);
    expect(rows[0]?.n).to.equal(1);
  });
});

describe('migration to addresses unique whatever their case', function () {
  // Seven runbox-admin processes, each a Node start-up on a shared machine.
  this.timeout(300_000);
  let t: TestDatabase;
  before(async () => {
    t = await freshDatabase('email_case', { upTo: '0011_admission_in_one_call' });
    await sql`INSERT INTO plans (name, monthly_limit, per_minute, pending, running, tests_per_request)
              VALUES ('free', ${FREE_PLAN.monthlyLimit}, ${FREE_PLAN.perMinute}, ${FREE_PLAN.pending}, ${FREE_PLAN.running}, ${FREE_PLAN.testsPerRequest})`.execute(t.db);
  });
  after(async () => {
    await t?.drop();
  });
  const admin = (...args: string[]) => execa(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args], { env: { RUNBOX_DATABASE_URL: t.url }, reject: false });

  it('reports accounts whose addresses differ only in case and changes nothing until the operator resolves them', async () => {
    const made = [];
    for (const email of ['Race@Example.com', 'other@example.com', 'race@example.com', 'RACE@example.COM']) {
      made.push((await t.db.insertInto('accounts').values({ email, plan: 'free' }).returning(['id', 'email']).executeTakeFirstOrThrow()).id);
    }
    const before = await t.db.selectFrom('accounts').select(['id', 'email']).orderBy('id').execute();

    const refused = await admin('migrate');
    expect(refused.exitCode).to.equal(1);
    expect(refused.stderr).to.include('1 email address is held by more than one account, differing only in case');
    for (const i of [0, 2, 3]) expect(refused.stderr).to.include(`account ${made[i]} <${before[i]!.email}>`);
    expect(refused.stderr).not.to.include('other@example.com');
    expect(refused.stderr).to.include('Nothing was changed').and.include('runbox-admin account set-email');
    // Every row as it was, and the migration not recorded.
    expect(await t.db.selectFrom('accounts').select(['id', 'email']).orderBy('id').execute()).to.deep.equal(before);
    const { rows } = await sql<{ name: string }>`SELECT name FROM kysely_migration WHERE name LIKE '0012%'`.execute(t.db);
    expect(rows).to.deep.equal([]);

    // The operator gives the later accounts addresses of their own (another case of the same address is refused).
    const clash = await admin('account', 'set-email', '--account', made[2]!, '--email', 'RACE@EXAMPLE.COM');
    expect(clash.exitCode, clash.stderr).to.equal(2);
    expect(clash.stderr).to.include('already exists');
    // A link sent to the old address ends with it.
    const { token } = await issueToken(t.db, 'reset', 'race@example.com', made[2]!);
    expect((await admin('account', 'set-email', '--account', made[2]!, '--email', 'race+2@example.com')).exitCode).to.equal(0);
    expect(await peekToken(t.db, 'reset', token)).to.equal(undefined);
    expect((await admin('account', 'set-email', '--account', made[3]!, '--email', 'race+3@example.com')).exitCode).to.equal(0);

    const applied = await admin('migrate');
    expect(applied.exitCode, applied.stderr).to.equal(0);
    expect(JSON.parse(applied.stdout).applied).to.include('0012_email_case_and_portal_limits');
    expect(await t.db.selectFrom('accounts').select('email').orderBy('id').execute()).to.deep.equal([
      { email: 'Race@Example.com' },
      { email: 'other@example.com' },
      { email: 'race+2@example.com' },
      { email: 'race+3@example.com' },
    ]);
    // From now on the index refuses any other case of a taken address.
    let err: unknown;
    await createAccount(t.db, 'RACE@example.com').catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(EmailTakenError);
    expect((await admin('account', 'create', '--email', 'OTHER@example.com')).exitCode).to.equal(2);
  });
});
