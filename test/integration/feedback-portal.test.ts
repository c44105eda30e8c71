import { expect } from 'chai';
import { createAdminKey } from '../../src/accounts/admin-keys.js';
import { createKey } from '../../src/accounts/keys.js';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Client } from '../helpers/portal-client.js';
import { makeZip } from '../helpers/zip.js';

// The portal's faces of exercises: the key form's Student key, a problem page's
// Feedback and sharing form, and another account's public problem kept out of the
// portal's pages (its problem page is a 404, as a private one's is).

const PASSWORD = 'a long enough password';

describe('portal: student keys and problem feedback settings', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let seq = 0;

  before(async () => {
    t = await freshDatabase('feedback_portal');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  const signUp = async () => {
    const c = new Client(api.url);
    const email = `feedback-${process.pid}-${++seq}@example.com`;
    expect((await c.post('/signup', { email, password: PASSWORD })).res.status).to.equal(302);
    const accountId = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
    return { c, accountId };
  };

  it('the key form makes a student key, the list says so, and its form unmarks it', async () => {
    const { c, accountId } = await signUp();
    expect((await c.post('/keys', { app_name: 'class', kind: 'api', student: 'on' }, '/keys/new')).res.status).to.equal(303);
    const row = await t.db.selectFrom('api_keys').select(['id', 'student']).where('account_id', '=', accountId).executeTakeFirstOrThrow();
    expect(row.student).to.equal(true);
    expect((await c.request('/keys')).body).to.include('API key (student)');
    // The key's own form shows it checked; saving without it unmarks it.
    expect((await c.request(`/keys/${row.id}`)).body).to.match(/id="f-student" name="student" checked/);
    expect((await c.post(`/keys/${row.id}`, { app_name: 'class' }, `/keys/${row.id}`)).res.status).to.equal(302);
    expect((await t.db.selectFrom('api_keys').select('student').where('id', '=', row.id).executeTakeFirstOrThrow()).student).to.equal(false);
  });

  it("a problem's page sets its feedback and public; another account's portal does not show it", async () => {
    const { c, accountId } = await signUp();
    const key = await createKey(t.db, { accountId, appName: 'teacher' });
    const res = await fetch(`${api.url}/api/v2/problems/`, {
      method: 'POST',
      headers: { Authorization: key.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Echo', tests: [{ input: 'a', expected_output: 'a', sample: true }, { input: 'secret-in', expected_output: 'secret-out' }] }),
    });
    expect(res.status).to.equal(201);
    const id = ((await res.json()) as { id: string }).id;
    const page = await c.request(`/problems/${id}`);
    expect(page.body).to.include('Feedback and sharing');
    const saved = await c.post(`/problems/${id}/settings`, { feedback: 'verdict', public: 'on' }, `/problems/${id}`);
    expect(saved.res.status).to.equal(303);
    expect(await t.db.selectFrom('problems').select(['feedback', 'public']).where('id', '=', id).executeTakeFirstOrThrow()).to.deep.equal({ feedback: 'verdict', public: true });
    expect((await c.follow(saved)).body).to.match(/<option value="verdict" selected/);
    expect((await c.post(`/problems/${id}/settings`, { feedback: 'all' }, `/problems/${id}`)).res.status).to.equal(400);
    // Public to judge against, but not another account's to see in its portal.
    const other = await signUp();
    expect((await other.c.request(`/problems/${id}`)).res.status).to.equal(404);
    expect((await other.c.post(`/problems/${id}/settings`, { feedback: 'full' }, '/problems')).res.status).to.equal(404);
    expect((await t.db.selectFrom('problems').select('feedback').where('id', '=', id).executeTakeFirstOrThrow()).feedback).to.equal('verdict');
  });

  it('the admin API marks a key as a student key when made and later; a widget key cannot be one', async () => {
    const { accountId } = await signUp();
    const admin = (await createAdminKey(t.db, 'ops')).key;
    const call = (method: string, path: string, body: unknown) =>
      fetch(`${api.url}${path}`, { method, headers: { Authorization: admin, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const made = await call('POST', `/api/admin/accounts/${accountId}/keys`, { app_name: 'class', student: true });
    expect(made.status).to.equal(201);
    const key = (await made.json()) as { id: string; student: boolean };
    expect(key.student).to.equal(true);
    const unmarked = await call('PATCH', `/api/admin/keys/${key.id}`, { student: false });
    expect(unmarked.status).to.equal(200);
    expect(((await unmarked.json()) as { student: boolean }).student).to.equal(false);
    const widget = await call('POST', `/api/admin/accounts/${accountId}/keys`, { app_name: 'page', kind: 'widget', allowed_origins: ['https://a.example'], student: true });
    expect(widget.status).to.equal(400);
  });

  it('an upload sets the feedback and public with the package', async () => {
    const { c, accountId } = await signUp();
    const form = new FormData();
    form.set('_csrf', await c.token('/problems'));
    form.set('feedback', 'first_failure');
    form.set('public', 'on');
    form.set('package', new Blob([new Uint8Array(makeZip([{ name: 'tests/1.in', content: 'a' }, { name: 'tests/1.out', content: 'a' }]))], { type: 'application/zip' }), 'p.zip');
    const { res } = await c.request('/problems', { method: 'POST', body: form });
    expect(res.status).to.equal(303);
    expect(await t.db.selectFrom('problems').select(['feedback', 'public']).where('account_id', '=', accountId).executeTakeFirstOrThrow()).to.deep.equal({ feedback: 'first_failure', public: true });
  });
});
