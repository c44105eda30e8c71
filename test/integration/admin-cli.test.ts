import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { sql } from 'kysely';
import { hashKey } from '../../src/accounts/keys.js';
import { MAX_MONTHLY_LIMIT } from '../../src/limits.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// The real admin CLI as a child process against a fresh database.

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** Parsed stdout; loosely typed because each command prints its own shape. */
  json: any;
}

describe('admin cli: accounts, plans, keys, usage, maintenance', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;

  function cli(...args: string[]): Promise<CliResult> {
    return cliWith({ RUNBOX_DATABASE_URL: t.url }, ...args);
  }

  function cliWith(env: NodeJS.ProcessEnv, ...args: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args],
        { env: { ...process.env, RUNBOX_ENV_FILE: '', ...env } },
        (err, stdout, stderr) => {
          const code = err ? ((err as { code?: number }).code ?? 1) : 0;
          let json: unknown;
          try {
            json = JSON.parse(stdout);
          } catch {
            json = undefined;
          }
          resolve({ code, stdout, stderr, json });
        },
      );
    });
  }

  async function ok(...args: string[]): Promise<any> {
    const r = await cli(...args);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).to.equal(0);
    return r.json;
  }

  async function fails(args: string[], message: RegExp): Promise<void> {
    const r = await cli(...args);
    expect(r.code, `${args.join(' ')} should fail`).to.not.equal(0);
    expect(r.stdout).to.equal('');
    expect(r.stderr).to.match(message);
  }

  before(async () => {
    t = await freshDatabase('admin_cli');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  it('plan upsert creates and updates plans, within the maximum monthly limit', async () => {
    const created = await ok('plan', 'upsert', '--name', 'pro', '--monthly-limit', '200000', '--per-minute', '120', '--tests-per-request', '50');
    expect(created).to.deep.equal({ name: 'pro', monthly_limit: 200000, per_minute: 120, pending: 8, running: 2, tests_per_request: 50, sandbox_seconds_per_request: 30 + 50 * 30, problem_storage_bytes: 64 * 1024 * 1024 });
    const updated = await ok('plan', 'upsert', '--name', 'pro', '--running', '6', '--sandbox-seconds-per-request', '1530');
    expect(updated).to.include({ monthly_limit: 200000, running: 6, sandbox_seconds_per_request: 1530 });
    await fails(['plan', 'upsert', '--name', 'huge', '--monthly-limit', String(MAX_MONTHLY_LIMIT + 1)], /monthly_?[lL]imit must be a whole number from 0 to 4000000/);
    await fails(['plan', 'upsert', '--name', 'x', '--pending', 'many'], /--pending must be a whole number/);
    // Newest first: the Free plan, made by the first migration, last.
    const plans = await ok('plan', 'list');
    expect(plans.map((p: { name: string }) => p.name)).to.deep.equal(['pro', 'free']);
    expect((await ok('plan', 'list', '--after', 'pro')).map((p: { name: string }) => p.name)).to.deep.equal(['free']);
  });

  it('account create, set-plan and set-limits', async () => {
    const account = await ok('account', 'create', '--email', 'dev@example.com');
    expect(account).to.include({ email: 'dev@example.com', plan: 'free' });
    expect(account.id).to.match(/^\d+$/);
    await fails(['account', 'create', '--email', 'dev@example.com'], /already exists/);
    await fails(['account', 'create', '--email', 'not an email'], /not an email address/);
    await fails(['account', 'create', '--email', 'b@example.com', '--plan', 'gold'], /no plan "gold"/);
    await fails(['account', 'create'], /--email is required/);
    const moved = await ok('account', 'set-plan', '--account', account.id, '--plan', 'pro');
    expect(moved.plan).to.equal('pro');
    expect(moved.limits.per_minute).to.equal(120);
    const overridden = await ok('account', 'set-limits', '--account', account.id, '--pending', '20', '--monthly-limit', '1000');
    expect(overridden.overrides).to.include({ pending: 20, monthly_limit: 1000 });
    expect(overridden.limits).to.include({ pending: 20, monthly_limit: 1000, per_minute: 120 });
    const cleared = await ok('account', 'set-limits', '--account', account.id, '--monthly-limit', 'none');
    expect(cleared.overrides).to.include({ pending: 20, monthly_limit: null });
    expect(cleared.limits.monthly_limit).to.equal(200000);
    await fails(['account', 'set-plan', '--account', '999999', '--plan', 'pro'], /no account 999999/);
  });

  it('key create shows the key once; the database holds only its hash; key list never shows it', async () => {
    const account = await ok('account', 'create', '--email', 'keys@example.com');
    const created = await ok('key', 'create', '--account', account.id, '--app-name', 'my app', '--redirect-url', 'https://example.com/cb', '--monthly-limit', '10');
    expect(created.key).to.match(/^rbx_[A-Za-z0-9_-]{43}$/);
    expect(created.signing_secret).to.match(/^rbxs_/);
    expect(created).to.include({ app_name: 'my app', redirect_url: 'https://example.com/cb', kind: 'api', monthly_limit: 10 });
    const row = await t.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect(row.key_hash.equals(hashKey(created.key))).to.equal(true);
    expect(JSON.stringify({ ...row, key_hash: row.key_hash.toString('hex') })).to.not.contain(created.key);
    expect(created.key.startsWith(row.key_prefix)).to.equal(true);

    const listed = await cli('key', 'list', '--account', account.id);
    expect(listed.code).to.equal(0);
    expect(listed.stdout).to.not.contain(created.key);
    expect(listed.stdout).to.not.contain(created.signing_secret);
    expect(listed.json).to.have.length(1);
    expect(listed.json[0]).to.not.have.any.keys('key', 'key_hash', 'signing_secret');
    expect(listed.json[0]).to.include({ id: created.id, key_prefix: row.key_prefix, revoked_at: null });

    await fails(['key', 'create', '--account', account.id, '--app-name', 'x', '--redirect-url', 'ftp://example.com/'], /http or https/);
    await fails(['key', 'create', '--account', account.id, '--app-name', 'x', '--kind', 'robot'], /--kind must be api or widget/);
    await fails(['key', 'create', '--account', '424242', '--app-name', 'x'], /no account 424242/);
    // The account by its address too (whatever its case), as the README's first run does.
    const byEmail = await ok('key', 'create', '--email', 'KEYS@example.com', '--app-name', 'by email');
    expect(byEmail).to.include({ account_id: account.id, app_name: 'by email' });
    expect((await ok('key', 'list', '--email', 'keys@example.com')).map((k: { id: string }) => k.id)).to.include(byEmail.id);
    await fails(['key', 'create', '--email', 'nobody@example.com', '--app-name', 'x'], /no account with email nobody@example.com/);
    await fails(['key', 'create', '--app-name', 'x'], /give --account ID or --email E/);
    await ok('key', 'revoke', '--key', byEmail.id);
    // A widget key runs only from its allowed origins: one is required.
    await fails(['key', 'create', '--account', account.id, '--app-name', 'site', '--kind', 'widget'], /a widget key needs at least one --origin/);
    await fails(['key', 'create', '--account', account.id, '--app-name', 'site', '--kind', 'widget', '--origin', 'https://a.example', '--redirect-url', 'https://a.example/cb'], /widget keys send no callbacks/);
    const sited = await ok('key', 'create', '--account', account.id, '--app-name', 'blog', '--kind', 'widget', '--origin', 'https://a.example', '--origin', 'https://B.example:8443/');
    expect(sited).to.include({ kind: 'widget', monthly_limit: null, redirect_url: null, signing_secret: null });
    expect(sited.allowed_origins).to.deep.equal(['https://a.example', 'https://b.example:8443']);
    await fails(['key', 'create', '--account', account.id, '--app-name', 'x', '--origin', 'https://a.example'], /widget keys only/);
    await fails(['key', 'set-origins', '--key', sited.id, '--origin', 'https://a.example/path'], /without a path/);
    await fails(['key', 'set-origins', '--key', sited.id], /at least one allowed origin/);
    const moved = await ok('key', 'set-origins', '--key', sited.id, '--origin', 'http://localhost:3000');
    expect(moved.allowed_origins).to.deep.equal(['http://localhost:3000']);
    const stored = await t.db.selectFrom('api_keys').select('allowed_origins').where('id', '=', sited.id).executeTakeFirstOrThrow();
    expect(stored.allowed_origins).to.deep.equal(['http://localhost:3000']);
  });

  it('key set-limit and key revoke act on the API', async () => {
    const account = await ok('account', 'create', '--email', 'revoke@example.com');
    const key = await ok('key', 'create', '--account', account.id, '--app-name', 'a');
    const run = { code: 'print(1)', compiler: 'python-3.9.7' };
    expect((await ok('key', 'set-limit', '--key', key.id, '--monthly-limit', '1')).monthly_limit).to.equal(1);
    expect((await postRun(api.url, key.key, run)).status).to.equal(200);
    expect((await postRun(api.url, key.key, run)).status).to.equal(429);
    expect((await ok('key', 'set-limit', '--key', key.id, '--monthly-limit', 'none')).monthly_limit).to.equal(null);
    expect((await postRun(api.url, key.key, run)).status).to.equal(200);
    const revoked = await ok('key', 'revoke', '--key', key.id);
    expect(revoked.revoked_at).to.be.a('string');
    expect((await postRun(api.url, key.key, run)).status).to.equal(401);

    const usage = await ok('usage', '--account', account.id);
    expect(usage).to.include({ account: account.id, submissions: 2, monthly_limit: 100000, remaining: 99998 });
    expect(usage).to.not.have.property('key');
    const other = await ok('usage', '--account', account.id, '--month', '2020-01');
    expect(other).to.include({ month: '2020-01', submissions: 0, resets_at: '2020-02-01T00:00:00.000Z' });
    await fails(['usage', '--account', account.id, '--month', '2020-13'], /YYYY-MM/);
  });

  it('maintenance on|off|status switches the run endpoint to 503 and back', async () => {
    const account = await ok('account', 'create', '--email', 'maint@example.com');
    const key = await ok('key', 'create', '--account', account.id, '--app-name', 'a');
    expect(await ok('maintenance', 'on')).to.deep.equal({ maintenance: true });
    expect(await ok('maintenance', 'status')).to.deep.equal({ maintenance: true });
    expect((await postRun(api.url, key.key, { code: 'x', compiler: 'python-3.9.7' })).status).to.equal(503);
    expect(await ok('maintenance', 'off')).to.deep.equal({ maintenance: false });
    expect((await postRun(api.url, key.key, { code: 'x', compiler: 'python-3.9.7' })).status).to.equal(200);
    await fails(['maintenance', 'maybe'], /say on, off or status/);
  });

  it('account list and account show --email', async () => {
    const a = await ok('account', 'create', '--email', 'List.Me@example.com');
    const b = await ok('account', 'create', '--email', 'other@example.com', '--plan', 'pro');
    await ok('key', 'create', '--account', a.id, '--app-name', 'one');
    const all = await ok('account', 'list');
    const row = all.find((r: { id: string }) => r.id === a.id);
    expect(row).to.deep.include({ email: 'List.Me@example.com', plan: 'free', active_keys: 1, marketplace_user: null });
    // Newest first.
    expect(all.map((r: { id: string }) => Number(r.id))).to.deep.equal([...all.map((r: { id: string }) => Number(r.id))].sort((x, y) => y - x));
    expect(all[0].id).to.equal(b.id);
    const pro = await ok('account', 'list', '--plan', 'pro');
    expect(pro.map((r: { id: string }) => r.id)).to.include(b.id).and.not.include(a.id);
    expect(await ok('account', 'list', '--limit', '1')).to.have.length(1);
    expect((await ok('account', 'show', '--email', 'list.me@EXAMPLE.com')).id).to.equal(a.id);
    expect((await ok('account', 'show', '--account', b.id)).email).to.equal('other@example.com');
    await fails(['account', 'show', '--email', 'nobody@example.com'], /no account with email nobody@example.com/);
    await fails(['account', 'show'], /give --account ID or --email E/);
  });

  it('lists newest first, a page at a time, and says how many more there are', async () => {
    // 129 accounts and then one more: the new one heads the list, not hidden past the first 100.
    await sql`INSERT INTO accounts (email, plan) SELECT 'bulk-' || g || '@example.com', 'free' FROM generate_series(1, 129) g`.execute(t.db);
    const newest = await ok('account', 'create', '--email', 'newest@example.com');
    const total = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM accounts`.execute(t.db)).rows[0]!.n);
    const first = await cli('account', 'list');
    expect(first.code, first.stderr).to.equal(0);
    expect(first.json).to.have.length(100);
    expect(first.json[0].id).to.equal(newest.id);
    const last = first.json[99].id as string;
    expect(first.stderr).to.equal(`runbox-admin account list: 100 shown, newest first; ${total - 100} more accounts: --after ${last} for the next page, --all for every one\n`);
    const second = await cli('account', 'list', '--after', last);
    expect(second.json).to.have.length(total - 100);
    expect(Number(second.json[0].id)).to.be.below(Number(last));
    expect(second.stderr).to.equal('');
    const everything = await cli('account', 'list', '--all');
    expect(everything.json).to.have.length(total);
    expect(everything.stderr).to.equal('');
    const small = await cli('account', 'list', '--limit', '2', '--plan', 'free');
    expect(small.json.map((r: { id: string }) => r.id)[0]).to.equal(newest.id);
    expect(small.stderr).to.match(/2 shown, newest first; \d+ more accounts: --after \d+ for the next page/);
    await fails(['account', 'list', '--all', '--limit', '5'], /--all and --limit do not go together/);
    await fails(['account', 'list', '--after', 'x'], /--after must be the id of a listed item/);
    await fails(['account', 'list', '--limit', '0'], /--limit must be at least 1/);

    // Keys and admin keys the same way.
    for (const name of ['one', 'two', 'three']) await ok('key', 'create', '--account', newest.id, '--app-name', name);
    const keys = await cli('key', 'list', '--account', newest.id, '--limit', '2');
    expect(keys.json.map((k: { app_name: string }) => k.app_name)).to.deep.equal(['three', 'two']);
    expect(keys.stderr).to.include('1 more keys: --after');
    const older = await ok('key', 'list', '--account', newest.id, '--after', keys.json[1].id);
    expect(older.map((k: { app_name: string }) => k.app_name)).to.deep.equal(['one']);
    const a1 = await ok('admin-key', 'create', '--label', 'first');
    const a2 = await ok('admin-key', 'create', '--label', 'second');
    const adminKeys = await cli('admin-key', 'list', '--limit', '1');
    expect(adminKeys.json.map((k: { id: string }) => k.id)).to.deep.equal([a2.id]);
    expect(adminKeys.stderr).to.match(/1 shown, newest first; \d+ more admin keys/);
    expect((await ok('admin-key', 'list', '--all')).map((k: { id: string }) => k.id)).to.include(a1.id);
  });

  it('JSON names are snake_case everywhere', async () => {
    const a = await ok('account', 'create', '--email', 'snake@example.com');
    const outputs = [await ok('account', 'show', '--account', a.id), await ok('account', 'list'), await ok('plan', 'list'), await ok('key', 'list', '--account', a.id), await ok('usage', '--account', a.id)];
    const names = (v: unknown): string[] =>
      Array.isArray(v) ? v.flatMap(names) : v !== null && typeof v === 'object' ? Object.entries(v).flatMap(([k, x]) => [k, ...names(x)]) : [];
    const camel = outputs.flatMap(names).filter((n) => /[a-z][A-Z]/.test(n));
    expect(camel).to.deep.equal([]);
    expect(outputs[0]).to.have.nested.property('limits.tests_per_request');
  });

  it('prints JSON when piped or with --json, tables on a terminal', async function () {
    const a = await ok('account', 'create', '--email', 'table@example.com');
    // Piped (execFile): JSON, with or without --json.
    expect((await cli('account', 'show', '--account', a.id)).json.email).to.equal('table@example.com');
    expect((await cli('account', 'show', '--account', a.id, '--json')).json.email).to.equal('table@example.com');
    // A real pseudo-terminal from util-linux script(1).
    const admin = join(PROJECT_ROOT, 'dist/src/cli/admin.js');
    const onTerminal = (...args: string[]) =>
      new Promise<string>((resolve) => {
        const inner = [process.execPath, admin, ...args].map((w) => `'${w}'`).join(' ');
        execFile('script', ['-qec', inner, '/dev/null'], { env: { ...process.env, RUNBOX_ENV_FILE: '', RUNBOX_DATABASE_URL: t.url, TERM: 'xterm' } }, (_e, stdout) =>
          resolve(stdout.replace(/\r/g, '')),
        );
      });
    const table = await onTerminal('account', 'show', '--account', a.id);
    expect(table).to.match(/│ email\s+│ table@example\.com\s+│/);
    expect(table).to.match(/│ limits\.monthly_limit\s+│ 100000\s+│/);
    expect(table).not.to.include('{');
    const list = await onTerminal('account', 'list');
    expect(list).to.match(/│ id\s+│ email\s+│ marketplace_user\s+│ plan\s+│ active_keys\s+│ created_at\s+│/);
    expect(list).to.include('table@example.com');
    const json = await onTerminal('account', 'show', '--account', a.id, '--json');
    expect(JSON.parse(json).email).to.equal('table@example.com');
  });

  it('reads /etc/runbox/runbox.env or RUNBOX_ENV_FILE, under what the environment sets', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-envfile-'));
    try {
      const file = join(dir, 'runbox.env');
      writeFileSync(file, `# as scripts/install writes it\nRUNBOX_DATABASE_URL=${t.url}\nRUNBOX_PUBLIC_URL=https://runbox.example.test\n`);
      // The database and the public URL come from the file: the invite link names the public URL.
      const fromFile = await cliWith({ RUNBOX_DATABASE_URL: undefined, RUNBOX_ENV_FILE: file }, 'account', 'invite', '--email', 'invited@example.com');
      expect(fromFile.code, fromFile.stderr).to.equal(0);
      expect(fromFile.json.link).to.match(/^https:\/\/runbox\.example\.test\/signup\?invite=/);
      // A variable set in the environment wins over the file.
      const overridden = await cliWith({ RUNBOX_ENV_FILE: file, RUNBOX_PUBLIC_URL: 'https://other.example.test' }, 'account', 'invite', '--email', 'invited2@example.com');
      expect(overridden.json.link).to.match(/^https:\/\/other\.example\.test\//);
      // A file that is named must exist.
      const missing = await cliWith({ RUNBOX_ENV_FILE: join(dir, 'nope.env') }, 'plan', 'list');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.match(/cannot read the environment file .*nope\.env/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a group answers --help with its commands', async () => {
    const r = await cli('account', '--help');
    expect(r.code).to.equal(0);
    expect(r.stdout).to.match(/^usage: runbox-admin account <command>/);
    for (const c of ['account create', 'account list', 'account show', 'account set-plan']) expect(r.stdout).to.include(c);
    expect(r.stdout).not.to.include('key create');
    const bare = await cli('key');
    expect(bare.code).to.equal(2);
    expect(bare.stderr).to.match(/'key' needs a command/);
    expect(bare.stderr).to.include('key revoke');
    const wrong = await cli('account', 'frobnicate');
    expect(wrong.code).to.equal(2);
    expect(wrong.stderr).to.match(/unknown command 'account frobnicate'/);
  });

  it('doctor shows a fix only for a check that failed', async () => {
    const r = await cliWith({ RUNBOX_DATABASE_URL: t.url, RUNBOX_IMAGES_DIR: images.dir }, 'doctor');
    const checks = r.json.checks as { name: string; ok: boolean; fix?: string }[];
    expect(checks.length).to.be.greaterThan(3);
    for (const c of checks) expect('fix' in c, c.name).to.equal(!c.ok);
    // The fake images directory holds python-3.9.7 only, so the gcc image check fails, with its fix.
    expect(checks.find((c) => c.name === 'image gcc')).to.deep.include({ ok: false, fix: 'runbox-admin image build gcc' });
    expect(checks.find((c) => c.name === 'database')).to.deep.include({ ok: true });
  });

  it('config docs, limits docs, libraries docs and verdicts docs --check say whether docs/ is up to date', async () => {
    for (const what of ['config', 'limits', 'libraries', 'verdicts']) {
      const r = await cli(what, 'docs', '--check');
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(/docs\/(configuration|limits|compilers|api)\.md: table up to date/);
    }
  });

  it('every command has --help', async () => {
    for (const name of ['account create', 'account list', 'account show', 'account set-plan', 'account set-limits', 'plan upsert', 'plan list', 'key create', 'key set-limit', 'key revoke', 'key list', 'usage', 'maintenance']) {
      const r = await cli(...name.split(' '), '--help');
      expect(r.code, name).to.equal(0);
      expect(r.stdout).to.contain(`usage: runbox-admin ${name}`);
    }
  });
});
