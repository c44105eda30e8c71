import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { sql } from 'kysely';
import { revokeAdminKey } from '../../src/accounts/admin-keys.js';
import { FREE_PLAN } from '../../src/limits.js';
import { startAdminListener } from '../../src/metrics/listener.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { accountWithKey, errorOf, fakeImagesDir, postRun, startTestApi, testConfig, TestClock, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// Health for load balancers, the admin endpoints behind admin keys, and /metrics (on
// the API with an admin key, and on the admin listener).

describe('health, admin API and metrics', function () {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let adminKey: string;
  let adminKeyId: string;

  before(async () => {
    t = await freshDatabase('admin_api');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
    // The operator's way: the admin CLI prints the key once.
    const out = execFileSync(join(PROJECT_ROOT, 'scripts/runbox-admin'), ['admin-key', 'create', '--label', 'ops team'], {
      env: { ...process.env, RUNBOX_DATABASE_URL: t.url },
      encoding: 'utf8',
    });
    const created = JSON.parse(out) as { id: string; key: string; label: string };
    expect(created.label).to.equal('ops team');
    adminKey = created.key;
    adminKeyId = created.id;
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  const call = (method: string, path: string, key?: string, body?: unknown) =>
    fetch(`${api.url}${path}`, {
      method,
      headers: { ...(key ? { Authorization: key } : {}), ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  it('GET /api/health: 200 degraded without a live runner, ok with one, counts the queue', async () => {
    let res = await call('GET', '/api/health');
    expect(res.status).to.equal(200);
    let body = (await res.json()) as { status: string; database: { ok: boolean }; runners: { live: number; slots: number }; queue: { queued: number } };
    expect(body.status).to.equal('degraded');
    expect(body.database.ok).to.equal(true);
    expect(body.runners).to.deep.equal({ live: 0, slots: 0 });
    await sql`INSERT INTO runners (id, hostname, slots, launcher) VALUES ('r1', 'h', 3, 'bwrap'), ('r-old', 'h', 5, 'bwrap')`.execute(t.db);
    await sql`UPDATE runners SET last_seen = now() - interval '1 hour' WHERE id = 'r-old'`.execute(t.db);
    const { key } = await accountWithKey(t.db);
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(200);
    res = await call('GET', '/api/health');
    body = (await res.json()) as typeof body;
    expect(body.status).to.equal('ok');
    expect(body.runners).to.deep.equal({ live: 1, slots: 3 });
    expect(body.queue.queued).to.equal(1);
  });

  it('/api/admin/*: 401 without or with a wrong key, 403 with an API key, 200 with an admin key', async () => {
    const { key } = await accountWithKey(t.db);
    let res = await call('GET', '/api/admin/maintenance');
    expect(res.status).to.equal(401);
    expect((await errorOf(res)).code).to.equal('missing_key');
    res = await call('GET', '/api/admin/maintenance', 'rbxa_not-a-key');
    expect(res.status).to.equal(401);
    res = await call('GET', '/api/admin/maintenance', key.key);
    expect(res.status).to.equal(403);
    expect((await errorOf(res)).code).to.equal('forbidden');
    res = await call('GET', '/api/admin/maintenance', adminKey);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ enabled: false });
    // And an admin key does not run code.
    expect((await postRun(api.url, adminKey, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(401);
  });

  it('accounts, keys and usage over the admin API', async () => {
    let res = await call('POST', '/api/admin/accounts/', adminKey, { email: 'admin-made@example.test' });
    expect(res.status).to.equal(201);
    const account = (await res.json()) as { id: string; email: string };
    expect(account.email).to.equal('admin-made@example.test');
    res = await call('POST', '/api/admin/accounts/', adminKey, { email: 'admin-made@example.test' });
    expect(res.status).to.be.oneOf([400, 409, 500]).and.not.equal(500);

    res = await call('POST', `/api/admin/accounts/${account.id}/keys`, adminKey, { app_name: 'made by admin', monthly_limit: 2 });
    expect(res.status).to.equal(201);
    const key = (await res.json()) as { id: string; key: string; monthly_limit: number };
    expect(key.monthly_limit).to.equal(2);
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(200);

    res = await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { monthly_limit: 50, running: 1 });
    expect(res.status).to.equal(200);
    const view = (await res.json()) as { limits: { monthlyLimit: number; running: number }; usage: { submissions: number }; keys: { id: string }[] };
    expect(view.limits.monthlyLimit).to.equal(50);
    expect(view.limits.running).to.equal(1);
    expect(view.usage.submissions).to.equal(1);
    expect(view.keys.map((k) => k.id)).to.deep.equal([key.id]);
    // The keys' own list is a page of them.
    const listed = (await (await call('GET', `/api/admin/accounts/${account.id}/keys`, adminKey)).json()) as { keys: { id: string }[]; more: number; next: null };
    expect(listed).to.deep.equal({ keys: listed.keys, more: 0, next: null });
    expect(listed.keys.map((k) => k.id)).to.deep.equal([key.id]);

    // The sandbox time per request, overridden and back to the plan's.
    const tests = Array.from({ length: 10 }, (_, i) => ({ input: String(i) }));
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7', tests: tests.slice(0, 1) })).status).to.equal(200);
    res = await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { sandbox_seconds_per_request: 60 });
    expect(res.status).to.equal(200);
    const refused = await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7', tests });
    expect(refused.status).to.equal(400);
    expect((await errorOf(refused)).message).to.match(/up to 300 s of sandbox time \(10 tests × 30 s\); this plan allows 60 s per request/);
    res = await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { sandbox_seconds_per_request: 300 });
    expect(res.status).to.equal(200);
    const raised = (await res.json()) as { limits: { sandboxSecondsPerRequest: number }; overrides: { sandboxSecondsPerRequest: number | null } };
    expect(raised.limits.sandboxSecondsPerRequest).to.equal(300);
    expect(raised.overrides.sandboxSecondsPerRequest).to.equal(300);
    res = await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { sandbox_seconds_per_request: null });
    expect(((await res.json()) as { limits: { sandboxSecondsPerRequest: number } }).limits.sandboxSecondsPerRequest).to.equal(FREE_PLAN.sandboxSecondsPerRequest);
    expect((await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { sandbox_seconds_per_request: 0 })).status).to.equal(400);
    // An unknown figure is named.
    res = await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { sandbox_seconds: 300 });
    expect(res.status).to.equal(400);
    expect((await errorOf(res)).message).to.match(/^unknown field sandbox_seconds: the fields are .*sandbox_seconds_per_request/);

    res = await call('GET', '/api/admin/usage/', adminKey);
    const usage = (await res.json()) as { accounts: { account_id: string; submissions: number }[] };
    expect(usage.accounts.find((a) => a.account_id === account.id)?.submissions).to.equal(2);

    res = await call('PATCH', `/api/admin/keys/${key.id}`, adminKey, { monthly_limit: null });
    expect(((await res.json()) as { monthly_limit: number | null }).monthly_limit).to.equal(null);

    // Widget keys take their allowed origins at creation and may change them.
    res = await call('POST', `/api/admin/accounts/${account.id}/keys`, adminKey, { app_name: 'blog', kind: 'widget', allowed_origins: ['https://a.example'] });
    expect(res.status).to.equal(201);
    const widget = (await res.json()) as { id: string; allowed_origins: string[]; signing_secret: string | null };
    expect(widget.allowed_origins).to.deep.equal(['https://a.example']);
    // It sends no callbacks, so it has no signing secret; and it needs a site to run on.
    expect(widget.signing_secret).to.equal(null);
    res = await call('POST', `/api/admin/accounts/${account.id}/keys`, adminKey, { app_name: 'nowhere', kind: 'widget' });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.include('a widget key needs at least one allowed origin');
    res = await call('PATCH', `/api/admin/keys/${widget.id}`, adminKey, { allowed_origins: [] });
    expect(res.status).to.equal(400);
    res = await call('PATCH', `/api/admin/keys/${widget.id}`, adminKey, { allowed_origins: ['https://a.example', 'https://b.example'] });
    expect(((await res.json()) as { allowed_origins: string[] }).allowed_origins).to.deep.equal(['https://a.example', 'https://b.example']);
    res = await call('PATCH', `/api/admin/keys/${widget.id}`, adminKey, { allowed_origins: ['not an origin'] });
    expect(res.status).to.equal(400);
    res = await call('PATCH', `/api/admin/keys/${key.id}`, adminKey, { allowed_origins: ['https://a.example'] });
    expect(res.status).to.equal(400);
    res = await call('PATCH', `/api/admin/keys/${key.id}`, adminKey, {});
    expect(res.status).to.equal(400);
    res = await call('DELETE', `/api/admin/keys/${key.id}`, adminKey);
    expect(res.status).to.equal(200);
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(401);

    expect((await call('GET', '/api/admin/accounts/999999', adminKey)).status).to.equal(404);
    expect((await call('PATCH', `/api/admin/accounts/${account.id}`, adminKey, { monthly_limit: -1 })).status).to.equal(400);
    expect((await call('GET', '/api/admin/usage/?month=2026-13', adminKey)).status).to.equal(400);
  });

  it('lists accounts, keys and usage newest (or most) first, a page at a time, saying how many more', async () => {
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call('POST', '/api/admin/accounts/', adminKey, { email: `paged-${i}@example.test`, plan: 'free' });
      made.push(((await res.json()) as { id: string }).id);
    }
    const total = (await t.db.selectFrom('accounts').select('id').execute()).length;
    let res = await call('GET', '/api/admin/accounts/?limit=2', adminKey);
    expect(res.status).to.equal(200);
    let page = (await res.json()) as { accounts: { id: string }[]; more: number; next: string | null };
    expect(page.accounts.map((a) => a.id)).to.deep.equal([made[4], made[3]]);
    expect(page.more).to.equal(total - 2);
    expect(page.next).to.equal(`/api/admin/accounts/?limit=2&after=${made[3]}`);
    res = await call('GET', page.next!, adminKey);
    page = (await res.json()) as typeof page;
    expect(page.accounts.map((a) => a.id)).to.deep.equal([made[2], made[1]]);
    expect(page.more).to.equal(total - 4);
    page = (await (await call('GET', '/api/admin/accounts/?all=true', adminKey)).json()) as typeof page;
    expect(page.accounts).to.have.length(total);
    expect(page).to.include({ more: 0, next: null });
    for (const bad of ['limit=0', 'limit=1001', 'limit=x', 'after=x', 'all=yes', 'all=true&limit=3']) {
      res = await call('GET', `/api/admin/accounts/?${bad}`, adminKey);
      expect(res.status, bad).to.equal(400);
    }

    for (const name of ['a', 'b', 'c']) await call('POST', `/api/admin/accounts/${made[0]}/keys`, adminKey, { app_name: name });
    const keys = (await (await call('GET', `/api/admin/accounts/${made[0]}/keys?limit=2`, adminKey)).json()) as { keys: { app_name: string }[]; more: number; next: string | null };
    expect(keys.keys.map((k) => k.app_name)).to.deep.equal(['c', 'b']);
    expect(keys.more).to.equal(1);
    const rest = (await (await call('GET', keys.next!, adminKey)).json()) as typeof keys;
    expect(rest.keys.map((k) => k.app_name)).to.deep.equal(['a']);
    expect(rest).to.include({ more: 0, next: null });

    // Usage: the accounts with the most submissions first.
    await t.db.insertInto('account_usage').values(made.map((id, i) => ({ account_id: id, month: '2026-01', submissions: 10 * (i + 1) }))).execute();
    const usage = (await (await call('GET', '/api/admin/usage/?month=2026-01&limit=3', adminKey)).json()) as { month: string; accounts: { account_id: string; submissions: number }[]; more: number; next: string };
    expect(usage.accounts.map((a) => a.submissions)).to.deep.equal([50, 40, 30]);
    expect(usage.more).to.equal(2);
    const usageRest = (await (await call('GET', usage.next, adminKey)).json()) as typeof usage;
    expect(usageRest.month).to.equal('2026-01');
    expect(usageRest.accounts.map((a) => a.submissions)).to.deep.equal([20, 10]);
  });

  it('maintenance switched over the admin API stops runs and not the admin API', async () => {
    const { key } = await accountWithKey(t.db);
    expect((await call('PUT', '/api/admin/maintenance', adminKey, { enabled: true })).status).to.equal(200);
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(503);
    expect((await call('GET', '/api/health')).status).to.equal(200);
    const res = await call('PUT', '/api/admin/maintenance', adminKey, { enabled: false });
    expect(await res.json()).to.deep.equal({ enabled: false });
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(200);
  });

  it('GET /metrics: admin key only on the API; open on the admin listener; 429s counted by reason', async () => {
    const { key } = await accountWithKey(t.db, { keyMonthlyLimit: 0 });
    expect((await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' })).status).to.equal(429);
    expect((await call('GET', '/metrics', key.key)).status).to.equal(403);
    expect((await call('GET', '/metrics')).status).to.equal(401);
    const res = await call('GET', '/metrics', adminKey);
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/plain/);
    const text = await res.text();
    expect(text).to.match(/^runbox_rejections_total\{reason="key_monthly_limit"\} [1-9]/m);
    expect(text).to.match(/^runbox_queue_jobs\{state="queued"\} \d+/m);
    expect(text).to.include('# TYPE runbox_run_duration_seconds histogram');

    const listener = await startAdminListener('127.0.0.1', 0);
    try {
      const open = await fetch(`http://127.0.0.1:${listener.port}/metrics`);
      expect(open.status).to.equal(200);
      expect(await open.text()).to.match(/^runbox_rejections_total\{reason="key_monthly_limit"\} [1-9]/m);
      expect((await fetch(`http://127.0.0.1:${listener.port}/other`)).status).to.equal(404);
    } finally {
      await listener.close();
    }
  });

  it('a revoked admin key is refused', async () => {
    await revokeAdminKey(t.db, adminKeyId);
    expect((await call('GET', '/api/admin/maintenance', adminKey)).status).to.equal(401);
  });
});
