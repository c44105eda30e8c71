import { expect } from 'chai';
import { createKey, WIDGET_NEEDS_ORIGIN, WIDGET_NO_REDIRECT } from '../../src/accounts/keys.js';
import { claim, complete } from '../../src/queue/index.js';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Client } from '../helpers/portal-client.js';
import { enqueue } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';

// The portal's pages over plain HTTP: a new key shown once behind a redirect (a reload
// makes no second key and shows nothing), widget keys (an allowed origin required, no
// signing secret, a placeholder in the snippet), the "show revoked" switch, a
// submission's readable result, sign-up errors all at once, and the footer.

const PASSWORD = 'a long enough password';
const unescape = (html: string) => html.replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&#39;/g, "'").replace(/&amp;/g, '&');

describe('portal pages over HTTP', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let seq = 0;

  const signUp = async () => {
    const c = new Client(api.url);
    const email = `pages-${process.pid}-${++seq}@example.com`;
    const { res } = await c.post('/signup', { email, password: PASSWORD });
    expect(res.status).to.equal(302);
    const accountId = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
    return { c, email, accountId };
  };
  const keyCount = async (accountId: string) => (await t.db.selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute()).length;
  const errorOf = (body: string, name: string) => new RegExp(`id="f-${name}-error">([^<]*)<`).exec(body)?.[1];

  before(async () => {
    t = await freshDatabase('portal_pages');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  it('answers key creation with 303 to a page that shows the key once; a reload makes no second key and shows it no more', async () => {
    const { c, accountId } = await signUp();
    const answer = await c.post('/keys', { app_name: 'prg app', kind: 'api' }, '/keys/new');
    expect(answer.res.status).to.equal(303);
    const location = answer.res.headers.get('location')!;
    expect(location).to.match(/^\/keys\/\d+\/created$/);
    expect(answer.body).not.to.match(/rbx_[A-Za-z0-9_-]{20,}/);

    const shown = await c.request(location);
    expect(shown.res.status).to.equal(200);
    const key = /id="new-key"[^>]*value="(rbx_[^"]+)"/.exec(shown.body)?.[1];
    const secret = /id="new-secret"[^>]*value="(rbxs_[^"]+)"/.exec(shown.body)?.[1];
    expect(key).to.be.a('string');
    expect(secret).to.be.a('string');
    expect(shown.res.headers.get('cache-control')).to.equal('no-store');

    // The reload: the same GET again.
    const again = await c.request(location);
    expect(again.res.status).to.equal(302);
    expect(again.res.headers.get('location')).to.match(/^\/keys\/\d+\?shown=1$/);
    const after = await c.follow(again);
    expect(after.body).not.to.include(key!).and.not.to.include(secret!);
    expect(after.body).to.include('cannot show it again');
    expect(await keyCount(accountId)).to.equal(1);
    // Nothing of it is kept once shown.
    expect(await t.db.selectFrom('key_reveals').selectAll().execute()).to.deep.equal([]);

    // The key works.
    const usage = await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key! } });
    expect(usage.status).to.equal(200);
  });

  it("shows a new key only to the session that made it, and only for a while", async () => {
    const { c, email } = await signUp();
    const answer = await c.post('/keys', { app_name: 'elsewhere', kind: 'api' }, '/keys/new');
    const location = answer.res.headers.get('location')!;
    // The same account logged in on another browser does not see it.
    const other = new Client(api.url);
    expect((await other.post('/login', { email, password: PASSWORD }, '/login')).res.status).to.equal(302);
    const there = await other.request(location);
    expect(there.res.status).to.equal(302);
    expect(there.body).not.to.match(/rbx_[A-Za-z0-9_-]{20,}/);
    // An expired reveal shows nothing either.
    await t.db.updateTable('key_reveals').set({ expires_at: new Date(Date.now() - 1000) }).execute();
    expect((await c.request(location)).res.status).to.equal(302);
    // And it is gone from the table.
    expect(await t.db.selectFrom('key_reveals').selectAll().execute()).to.deep.equal([]);
  });

  it('shows a rolled signing secret once, behind a redirect', async () => {
    const { c } = await signUp();
    const made = await c.follow(await c.post('/keys', { app_name: 'roller', kind: 'api' }, '/keys/new'));
    const id = /\/keys\/(\d+)/.exec(made.body)![1]!;
    const answer = await c.post(`/keys/${id}/roll`, {}, `/keys/${id}`);
    expect(answer.res.status).to.equal(303);
    const shown = await c.follow(answer);
    const secret = /id="new-secret"[^>]*value="(rbxs_[^"]+)"/.exec(shown.body)![1]!;
    const stored = await t.db.selectFrom('api_keys').select('signing_secret').where('id', '=', id).executeTakeFirstOrThrow();
    expect(stored.signing_secret).to.equal(secret);
    const again = await c.follow(answer);
    expect(again.res.status).to.equal(302);
    expect((await c.follow(again)).body).not.to.include(secret);
  });

  it('refuses a widget key without an allowed origin, or with a Redirect Url, next to the field', async () => {
    const { c, accountId } = await signUp();
    const none = await c.post('/keys', { app_name: 'no site', kind: 'widget', allowed_origins: '  \n ' }, '/keys/new');
    expect(none.res.status).to.equal(400);
    expect(unescape(errorOf(none.body, 'allowed_origins')!)).to.equal(WIDGET_NEEDS_ORIGIN);
    // The first field with an error takes the focus.
    expect(none.body).to.match(/<textarea[^>]*id="f-allowed_origins"[^>]*autofocus/);
    const redirect = await c.post('/keys', { app_name: 'callbacks', kind: 'widget', allowed_origins: 'https://a.example', redirect_url: 'https://a.example/cb' }, '/keys/new');
    expect(redirect.res.status).to.equal(400);
    expect(unescape(errorOf(redirect.body, 'redirect_url')!)).to.equal(WIDGET_NO_REDIRECT);
    expect(await keyCount(accountId)).to.equal(0);
    // The domain refuses it too, for every caller.
    await createKey(t.db, { accountId, appName: 'x', kind: 'widget' }).then(
      () => expect.fail('created'),
      (err: Error) => expect(err.message).to.equal(WIDGET_NEEDS_ORIGIN),
    );
  });

  it('labels a widget key "Widget key", gives it no signing secret, lists its origins, and puts a placeholder in the snippet of its page', async () => {
    const { c } = await signUp();
    const shown = await c.follow(await c.post('/keys', { app_name: 'blog widget', kind: 'widget', allowed_origins: 'https://blog.example\nhttps://docs.example:8443' }, '/keys/new'));
    expect(shown.res.status).to.equal(200);
    expect(shown.body).to.include('<label for="new-key">Widget key</label>');
    expect(shown.body).not.to.include('Signing secret');
    const key = /id="new-key"[^>]*value="(rbx_[^"]+)"/.exec(shown.body)![1]!;
    // On the page shown at creation: the real key in the snippet.
    expect(unescape(shown.body)).to.include(`<runbox-widget key="${key}"`);
    const row = await t.db.selectFrom('api_keys').select(['id', 'signing_secret', 'redirect_url', 'key_prefix']).where('app_name', '=', 'blog widget').executeTakeFirstOrThrow();
    expect(row.signing_secret).to.equal(null);
    expect(row.redirect_url).to.equal(null);

    const page = await c.request(`/keys/${row.id}`);
    const snippet = unescape(/<textarea id="embed-snippet"[^>]*>([^<]*)</.exec(page.body)![1]!);
    expect(snippet).to.include('key="YOUR_WIDGET_KEY"');
    expect(snippet).not.to.include(row.key_prefix);
    expect(snippet).not.to.include('…');
    expect(page.body).not.to.include('Roll signing secret');
    expect(page.body).not.to.include('id="f-redirect_url"');
    expect((await c.post(`/keys/${row.id}/roll`, {}, `/keys/${row.id}`)).res.status).to.equal(400);
    // Saving it without an origin is refused as well.
    const emptied = await c.post(`/keys/${row.id}`, { app_name: 'blog widget', monthly_limit: '', allowed_origins: '' }, `/keys/${row.id}`);
    expect(emptied.res.status).to.equal(400);
    expect(unescape(errorOf(emptied.body, 'allowed_origins')!)).to.equal(WIDGET_NEEDS_ORIGIN);

    const list = await c.request('/keys');
    const cell = /<tr data-key-id="\d+" data-key-prefix="[^"]+">[\s\S]*?data-field="allowed_origins">([\s\S]*?)<\/td>/.exec(list.body)![1]!;
    expect(cell).to.include('https://blog.example').and.include('https://docs.example:8443');
    expect(list.body).to.include('Widget key');
  });

  it('lists submissions and keys newest first, a page at a time, saying how many more there are', async () => {
    const { c, accountId } = await signUp();
    const base = Date.now() - 3600_000;
    const ids: string[] = [];
    for (let i = 0; i < 120; i++) ids.push(await enqueue(t.db, accountId, { createdAt: new Date(base + i * 1000) }));
    const rowsOf = (body: string) => [...body.matchAll(/<tr data-submission-id="([^"]+)"/g)].map((m) => m[1]);
    const olderLink = (body: string) => /<a href="(\/submissions\?after=[^"]+)">Older<\/a>/.exec(body)?.[1];
    const first = await c.request('/submissions');
    expect(rowsOf(first.body)).to.deep.equal(ids.slice(70).reverse());
    expect(first.body).to.include('50 shown, newest first; 70 older ones.');
    expect(first.body).not.to.include('>Newest</a>');
    const second = await c.request(olderLink(first.body)!);
    expect(rowsOf(second.body)).to.deep.equal(ids.slice(20, 70).reverse());
    expect(second.body).to.include('50 shown, newest first; 20 older ones.');
    expect(second.body).to.include('<a href="/submissions">Newest</a>');
    const third = await c.request(olderLink(second.body)!);
    expect(rowsOf(third.body)).to.deep.equal(ids.slice(0, 20).reverse());
    expect(third.body).to.include('20 shown, newest first; no older ones.');
    expect(olderLink(third.body)).to.equal(undefined);
    // Queued rows no runner takes: gone again, so later tests claim their own.
    await t.db.deleteFrom('submissions').where('account_id', '=', accountId).execute();

    for (let i = 0; i < 53; i++) await createKey(t.db, { accountId, appName: `key ${i}`, redirectUrl: null, monthlyLimit: null });
    const names = (body: string) => [...body.matchAll(/<a href="\/keys\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);
    const keys = await c.request('/keys');
    expect(names(keys.body)).to.have.length(50);
    expect(names(keys.body)[0]).to.equal('key 52');
    expect(keys.body).to.include('50 shown, newest first; 3 more keys.');
    const rest = await c.request(/<a href="(\/keys\?after=\d+)">Older<\/a>/.exec(keys.body)![1]!);
    expect(names(rest.body)).to.deep.equal(['key 2', 'key 1', 'key 0']);
    expect(rest.body).to.include('3 shown, newest first; no more.');
    const dashboard = await c.request('/');
    expect(dashboard.body).to.include('10 shown, newest first; 43 more on the <a href="/keys">API keys</a> page.');
  });

  it('hides revoked keys from the list and the dashboard until "Show revoked keys", and remembers the choice', async () => {
    const { c } = await signUp();
    await c.follow(await c.post('/keys', { app_name: 'kept key', kind: 'api' }, '/keys/new'));
    const gone = await c.follow(await c.post('/keys', { app_name: 'gone key', kind: 'api' }, '/keys/new'));
    const goneId = /\/keys\/(\d+)/.exec(gone.body)![1]!;
    const revoked = await c.post(`/keys/${goneId}/revoke`, {}, `/keys/${goneId}/revoke`);
    expect(revoked.res.status).to.equal(302);
    const listed = await c.follow(revoked);
    expect(listed.body).to.include('The key is revoked');
    const names = (body: string) => [...body.matchAll(/<a href="\/keys\/\d+">([^<]+)<\/a>/g)].map((m) => m[1]);

    expect(names(listed.body)).to.deep.equal(['kept key']);
    expect(listed.body).to.include('<a href="/keys?revoked=show">Show revoked keys (1)</a>');
    expect(names((await c.request('/')).body)).to.deep.equal(['kept key']);

    const shown = await c.request('/keys?revoked=show');
    expect(names(shown.body)).to.deep.equal(['gone key', 'kept key']);
    expect(shown.body).to.include('Hide revoked keys');
    // Remembered: the plain list and the dashboard show them too now.
    expect(names((await c.request('/keys')).body)).to.deep.equal(['gone key', 'kept key']);
    expect(names((await c.request('/')).body)).to.deep.equal(['gone key', 'kept key']);
    await c.request('/?revoked=hide');
    expect(names((await c.request('/keys')).body)).to.deep.equal(['kept key']);
  });

  it("shows a submission's code, input and result as fields, with the raw JSON in the API's key order behind a toggle", async () => {
    const { c, accountId } = await signUp();
    const made = await c.follow(await c.post('/keys', { app_name: 'runs', kind: 'api' }, '/keys/new'));
    const key = /id="new-key"[^>]*value="(rbx_[^"]+)"/.exec(made.body)![1]!;
    const keyId = /\/keys\/(\d+)/.exec(made.body)![1]!;
    const id = await enqueue(t.db, accountId, { keyId, code: 'name = input()\nprint(f"<b>{name}</b>")\n', input: 'Ada & co' });
    const [job] = await claim(t.db, 'pages-test', 1, 60);
    expect(job!.id).to.equal(id);
    await complete(t.db, 'pages-test', id, successResult(id, { output: '<b>Ada & co</b>\n', error: 'warning: x < y\n', time: 0.041, total: 0.12, memory: 2765 }));

    const page = await c.request(`/submissions/${id}`);
    expect(page.res.status).to.equal(200);
    const field = (name: string) => {
      const m = new RegExp(`<(?:pre|dd|p)[^>]*data-field="${name.replace('.', '\\.')}"[^>]*>([\\s\\S]*?)</(?:pre|dd|p)>`).exec(page.body);
      return m ? unescape(m[1]!) : undefined;
    };
    expect(page.body).to.match(/<pre[^>]*data-field="code"/);
    expect(field('code')).to.equal('name = input()\nprint(f"<b>{name}</b>")\n');
    expect(field('input')).to.equal('Ada & co');
    expect(field('result.status')).to.equal('success');
    expect(page.body).to.match(/<pre[^>]*data-field="result\.output"/);
    expect(field('result.output')).to.equal('<b>Ada & co</b>\n');
    expect(field('result.error')).to.equal('warning: x < y\n');
    expect(field('result.time')).to.equal('41 ms');
    expect(field('result.total')).to.equal('120 ms');
    expect(field('result.memory')).to.equal('2.7 MB');

    const raw = /<details class="raw"><summary>([^<]+)<\/summary><pre[^>]*data-field="json"[^>]*>([\s\S]*?)<\/pre><\/details>/.exec(page.body);
    expect(raw, 'raw JSON inside <details>').not.to.equal(null);
    const answer = await fetch(`${api.url}/api/v2/submissions/${id}`, { headers: { Authorization: key } });
    const apiText = await answer.text();
    // The very answer of the API, fields in its order (compared as text, so order counts).
    expect(unescape(raw![2]!)).to.equal(JSON.stringify(JSON.parse(apiText), null, 2));
    expect(Object.keys((JSON.parse(apiText) as { result: object }).result).slice(0, 5)).to.deep.equal(['id', 'compiler', 'status', 'output', 'error']);
    // Dates in the one form.
    expect(page.body).to.match(/<time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>/);
  });

  it('writes the dashboard\'s counts with thousands separators (their values in <data value>) and shows the limits that apply', async () => {
    const { c, accountId } = await signUp();
    // Figures of the account's own over its plan's: the dashboard shows those in force.
    await t.db.updateTable('accounts').set({ monthly_limit: 1234567, tests_per_request: 1500 }).where('id', '=', accountId).execute();
    const page = await c.request('/');
    expect(page.res.status).to.equal(200);
    const figure = (name: string) => new RegExp(`data-field="${name}"[^>]*>\\s*([\\s\\S]*?)\\s*</(?:dd|td)>`).exec(page.body)?.[1];
    expect(figure('monthly_limit')).to.equal('<data value="1234567">1,234,567</data>');
    expect(figure('remaining')).to.equal('<data value="1234567">1,234,567</data>');
    expect(figure('submissions')).to.equal('<data value="0">0</data>');
    // The plan's limits beside the service's own bound on runs at once.
    for (const row of ['Submissions per minute', 'Pending (queued or running)', 'Running at once', 'Run slots of the service', 'Tests per request', 'Sandbox time per request']) {
      expect(page.body, row).to.include(`<th scope="row">${row}</th>`);
    }
    expect(figure('tests_per_request')).to.equal('<data value="1500">1,500</data>');
    expect(figure('runner_slots')).to.match(/^<data value="\d+">[\d,]+<\/data>$/);
  });

  it('shows every sign-up error at once, with the focus on the first', async () => {
    const c = new Client(api.url);
    const bad = await c.post('/signup', { email: 'not an address', password: 'short' });
    expect(bad.res.status).to.equal(400);
    expect(errorOf(bad.body, 'email')).to.match(/is not an email address/);
    expect(errorOf(bad.body, 'password')).to.match(/at least/);
    expect(bad.body).to.match(/<input[^>]*id="f-email"[^>]*autofocus/);
    expect(bad.body).not.to.match(/<input[^>]*id="f-password"[^>]*autofocus/);
    expect(bad.body).to.include('2 fields need a change');
    // A taken address (no SMTP: the page may say so) with a short password: both.
    const { email } = await signUp();
    const taken = await new Client(api.url).post('/signup', { email, password: 'short' });
    expect(errorOf(taken.body, 'email')).to.match(/already exists/);
    expect(errorOf(taken.body, 'password')).to.match(/at least/);
    // Only the password wrong: the focus goes there.
    const pw = await new Client(api.url).post('/signup', { email: `fine-${process.pid}@example.com`, password: 'short' });
    expect(pw.body).to.match(/<input[^>]*id="f-password"[^>]*autofocus/);
  });

  it('without SMTP, "Forgot password" says to ask the operator and shows no command', async () => {
    const { body } = await new Client(api.url).request('/forgot');
    expect(body).to.include('Ask the operator of this service');
    expect(body).not.to.include('runbox-admin');
    expect(body).not.to.include('<code>');
  });

  it('links the documentation from the footer of every page, and the link works without an account', async () => {
    const { c } = await signUp();
    const anon = new Client(api.url);
    for (const [client, path] of [
      [anon, '/login'],
      [anon, '/signup'],
      [anon, '/forgot'],
      [c, '/'],
      [c, '/keys'],
      [c, '/keys/new'],
      [c, '/submissions'],
      [c, '/playground'],
      [c, '/account'],
      [c, '/no/such/page'],
    ] as const) {
      const { body } = await client.request(path);
      expect(body, path).to.match(/<footer[^>]*>[\s\S]*<a href="\/docs\/">Documentation<\/a>/);
    }
    const docs = await anon.request('/docs/');
    expect(docs.res.status).to.equal(200);
    expect(docs.body).to.include('API reference');
    // rootfs/README.md (the images) is a page too, and the pages that name it link to it.
    const compilers = await anon.request('/docs/compilers');
    expect(compilers.body).to.include('href="/docs/images"');
    expect(compilers.body).to.not.include('class="doc-file"');
    const images = await anon.request('/docs/images');
    expect(images.res.status).to.equal(200);
    expect(images.body).to.include('<h1>Compiler images</h1>').and.include('id="runtime-options"');
  });
});
