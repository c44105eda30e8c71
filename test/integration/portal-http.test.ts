import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { SMTPServer } from 'smtp-server';
import { sql } from 'kysely';
import { createAccount } from '../../src/accounts/accounts.js';
import { EmailTakenError } from '../../src/accounts/errors.js';
import { createKey } from '../../src/accounts/keys.js';
import { findLogin } from '../../src/accounts/passwords.js';
import { PORTAL_REDELIVERIES_PER_WINDOW, PROBLEM_LIMITS } from '../../src/limits.js';
import { MAX_FAILURES_PER_ADDRESS } from '../../src/portal/login-limit.js';
import { claim, complete } from '../../src/queue/index.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { enqueue } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';
import { Client } from '../helpers/portal-client.js';
import { makeZip } from '../helpers/zip.js';

// The portal over plain HTTP: what a browser test cannot easily show. The API's own
// answers beside it, headers, CSRF refusals, the log-in limiter, session rotation and
// server-side log-out, Secure cookies behind https, sign-up modes with the CLI's
// invite and reset links, and verification and reset by email through a real SMTP server.

async function smtpServer(): Promise<{ url: string; mails: string[]; close(): Promise<void> }> {
  const mails: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push(Buffer.concat(chunks).toString('utf8'));
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, close: () => new Promise((r) => server.close(() => r())) };
}

function cli(url: string, env: Record<string, string>, ...args: string[]): Promise<{ code: number; json: any; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args], { env: { ...process.env, RUNBOX_DATABASE_URL: url, ...env } }, (err, stdout, stderr) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, json, stderr });
    });
  });
}

const PASSWORD = 'a long enough password';

/** A submission of the key, claimed and completed through the queue's transitions (which write its callback delivery). */
async function finishedSubmissionIn(db: TestDatabase['db'], accountId: string, keyId: string): Promise<string> {
  const id = await enqueue(db, accountId, { keyId });
  const [job] = await claim(db, 'runner-test', 1, 60);
  expect(job!.id).to.equal(id);
  expect(await complete(db, 'runner-test', id, successResult(id, { output: 'hello\n' }))).to.equal(true);
  return id;
}

describe('web portal over HTTP', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let images: FakeImages;
  const apis: TestApi[] = [];
  let open: TestApi;
  let seq = 0;

  const start = async (extra: Record<string, string> = {}) => {
    const api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir, extra), clock: new TestClock() });
    apis.push(api);
    return api;
  };
  const finishedSubmission = (accountId: string, keyId: string) => finishedSubmissionIn(t.db, accountId, keyId);
  /** A new account, logged in; with SMTP the sign-up answers "check your email" and the log-in follows. */
  const signUp = async (api: TestApi, email = `http-${process.pid}-${++seq}@example.com`) => {
    const c = new Client(api.url);
    const { res, body } = await c.post('/signup', { email, password: PASSWORD });
    if (res.status === 200) {
      expect(body).to.include('Check your email');
      expect((await c.post('/login', { email, password: PASSWORD }, '/login')).res.status).to.equal(302);
    } else expect(res.status).to.equal(302);
    return { c, email };
  };

  before(async () => {
    t = await freshDatabase('portal_http');
    images = fakeImagesDir(['python-3.9.7']);
    open = await start();
  });
  after(async () => {
    for (const a of apis) await a.close();
    images?.remove();
    await t?.drop();
  });

  it('leaves the API as it was: JSON 404, 405 and 406 under /api/, while other paths answer HTML', async () => {
    const missing = await fetch(`${open.url}/api/v3/nothing`);
    expect(missing.status).to.equal(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).to.equal('not_found');
    const wrong = await fetch(`${open.url}/api/limits/`, { method: 'DELETE' });
    expect(wrong.status).to.equal(405);
    expect(wrong.headers.get('allow')).to.include('GET');
    expect((await fetch(`${open.url}/api/limits/`, { headers: { Accept: 'image/png' } })).status).to.equal(406);
    expect((await fetch(`${open.url}/metrics`)).status).to.equal(401);
    const login = await fetch(`${open.url}/login`, { headers: { Accept: 'application/json' } });
    expect(login.status).to.equal(200);
    expect(login.headers.get('content-type')).to.equal('text/html; charset=utf-8');
    const { c } = await signUp(open);
    const nothing = await c.request('/no/such/page');
    expect(nothing.res.status).to.equal(404);
    expect(nothing.res.headers.get('content-type')).to.include('text/html');
    expect(nothing.body).to.include('Not found');
  });

  it('answers a path that is no page with 404 also without a session; pages send to log-in; repository links to docs redirect', async () => {
    for (const path of ['/robots.txt', '/sign-up', '/keys/x/y/z']) {
      const res = await fetch(`${open.url}${path}`, { redirect: 'manual' });
      expect(res.status, path).to.equal(404);
      expect(await res.text(), path).to.include('Not found');
    }
    for (const path of ['/keys', '/submissions', '/playground']) {
      const res = await fetch(`${open.url}${path}`, { redirect: 'manual' });
      expect([res.status, res.headers.get('location')], path).to.deep.equal([302, `/login?next=${encodeURIComponent(path)}`]);
    }
    for (const [path, to] of [['/docs/api.md', '/docs/api'], ['/docs/README.md', '/docs/'], ['/docs/Limits.md', '/docs/limits']]) {
      const res = await fetch(`${open.url}${path}`, { redirect: 'manual' });
      expect([res.status, res.headers.get('location')], path).to.deep.equal([302, to]);
    }
  });

  it('serves the tab icon to anyone: named by every page, and at /favicon.ico without a redirect to log in', async () => {
    const page = await new Client(open.url).request('/login');
    const href = /<link rel="icon" type="image\/svg\+xml" href="(\/assets\/icon-[0-9a-f]{12}\.svg)"/.exec(page.body)?.[1];
    expect(href, 'the icon link').to.be.a('string');
    for (const path of [href!, '/favicon.ico']) {
      const res = await fetch(`${open.url}${path}`, { redirect: 'manual' });
      expect(res.status, path).to.equal(200);
      expect(res.headers.get('content-type'), path).to.equal('image/svg+xml');
      expect(await res.text(), path).to.match(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    }
  });

  it('sends strict headers and no inline script on every page', async () => {
    const { c } = await signUp(open);
    for (const path of ['/login', '/signup', '/', '/keys', '/keys/new', '/submissions', '/playground', '/account', '/docs/', '/docs/api']) {
      const { res, body } = await (path === '/login' || path === '/signup' || path.startsWith('/docs/') ? new Client(open.url) : c).request(path);
      expect(res.status, path).to.equal(200);
      const csp = res.headers.get('content-security-policy')!;
      expect(csp).to.include("script-src 'self'").and.include("frame-ancestors 'none'").and.not.include('unsafe-inline');
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.headers.get('referrer-policy')).to.equal('same-origin');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      expect(body, `${path} has an inline script`).not.to.match(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(body, `${path} has an inline handler or style`).not.to.match(/\son[a-z]+=|\sstyle=/);
    }
  });

  it('refuses state-changing forms without the token, or sent from another site', async () => {
    const { c } = await signUp(open);
    const noToken = await c.request('/keys', { form: { app_name: 'forged' } });
    expect(noToken.res.status).to.equal(403);
    const foreign = await c.post('/keys', { app_name: 'forged', kind: 'api' }, '/keys/new', { Origin: 'https://evil.example' });
    expect(foreign.res.status).to.equal(403);
    const logout = await c.request('/logout', { form: {} });
    expect(logout.res.status).to.equal(403);
    const anon = await new Client(open.url).request('/login', { form: { email: 'x@example.com', password: PASSWORD } });
    expect(anon.res.status).to.equal(403);
    const keys = await c.request('/keys');
    expect(keys.body).not.to.include('forged');
    // With its token and from this site the same form works.
    const good = await c.post('/keys', { app_name: 'made here', kind: 'api' }, '/keys/new', { Origin: open.url });
    expect(good.res.status).to.equal(303);
  });

  it("creates widget keys with their allowed origins and embed snippet; each rule's error shows next to its field", async () => {
    const { c } = await signUp(open);
    const bad = await c.post('/keys', { app_name: '', redirect_url: 'ftp://x', monthly_limit: '-1', kind: 'api', allowed_origins: 'https://a.example' }, '/keys/new');
    expect(bad.res.status).to.equal(400);
    const errorOf = (name: string) => new RegExp(`id="f-${name}-error">([^<]*)<`).exec(bad.body)?.[1];
    expect(errorOf('app_name')).to.equal('app name must have 1 to 200 characters');
    expect(errorOf('redirect_url')).to.equal('redirect URL must use http or https, not ftp');
    expect(errorOf('monthly_limit')).to.match(/^monthly limit must be a whole number/);
    expect(errorOf('allowed_origins')).to.equal('allowed origins are for widget keys only');
    const answer = await c.post('/keys', { app_name: 'docs widget', kind: 'widget', monthly_limit: '50', allowed_origins: 'https://docs.example.com\nhttp://localhost:3000/' }, '/keys/new');
    expect(answer.res.status).to.equal(303);
    const made = await c.follow(answer);
    expect(made.res.status).to.equal(200);
    const key = /id="new-key"[^>]*value="([^"]+)"/.exec(made.body)?.[1] ?? /value="(rbx_[^"]+)"/.exec(made.body)![1]!;
    const snippet = made.body.replace(/&quot;/g, '"').replace(/&lt;/g, '<');
    expect(snippet).to.include(`<script type="module" src="${open.url}/widget/v1.js"></script>\n<runbox-widget key="${key}" compiler="python-3.9.7">print("hello")</runbox-widget>`);
    expect(made.body).to.include('data-widget-preview');
    const row = await t.db.selectFrom('api_keys').select(['kind', 'allowed_origins', 'monthly_limit']).where('app_name', '=', 'docs widget').executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ kind: 'widget', allowed_origins: ['https://docs.example.com', 'http://localhost:3000'], monthly_limit: 50 });
  });

  it('rolls a signing secret: the new one is shown once and replaces the old one', async () => {
    const { c } = await signUp(open);
    const made = await c.follow(await c.post('/keys', { app_name: 'rolling', kind: 'api' }, '/keys/new'));
    const first = /value="(rbxs_[^"]+)"/.exec(made.body)![1]!;
    const row = await t.db.selectFrom('api_keys').select(['id', 'signing_secret']).where('app_name', '=', 'rolling').executeTakeFirstOrThrow();
    expect(row.signing_secret).to.equal(first);
    const answer = await c.post(`/keys/${row.id}/roll`, {}, `/keys/${row.id}`);
    expect(answer.res.status).to.equal(303);
    const rolled = await c.follow(answer);
    expect(rolled.res.status).to.equal(200);
    const second = /value="(rbxs_[^"]+)"/.exec(rolled.body)![1]!;
    expect(second).not.to.equal(first);
    expect((await t.db.selectFrom('api_keys').select('signing_secret').where('id', '=', row.id).executeTakeFirstOrThrow()).signing_secret).to.equal(second);
    expect((await c.request(`/keys/${row.id}`)).body).not.to.include(second);
    // Another account cannot roll it.
    const { c: other } = await signUp(open);
    expect((await other.post(`/keys/${row.id}/roll`, {}, '/account')).res.status).to.equal(404);
  });

  it('rotates the session at log-in and ends it on the server at log-out', async () => {
    const { c, email } = await signUp(open);
    const first = c.cookies.get('rbx_session')!;
    const again = await c.post('/login', { email, password: PASSWORD }, '/account');
    expect(again.res.status).to.equal(302);
    const second = c.cookies.get('rbx_session')!;
    expect(second).not.to.equal(first);
    // The replaced session no longer works.
    const stale = new Client(open.url);
    stale.cookies.set('rbx_session', first);
    expect((await stale.request('/keys')).res.headers.get('location')).to.match(/^\/login/);
    await c.post('/logout', {}, '/account');
    const copy = new Client(open.url);
    copy.cookies.set('rbx_session', second);
    expect((await copy.request('/')).res.status).to.equal(302);
    expect(await t.db.selectFrom('portal_sessions').select('id_hash').where('id_hash', '=', Buffer.from(second)).execute()).to.deep.equal([]);
    expect(c.setCookies.find((s) => s.startsWith('rbx_session=;'))).to.include('Max-Age=0');
  });

  it('limits log-in attempts per address and per client IP, with one message for unknown and wrong', async () => {
    const { email } = await signUp(open);
    const c = new Client(open.url);
    const unknown = await c.post('/login', { email: `none-${process.pid}@example.com`, password: PASSWORD }, '/login');
    const wrong = await c.post('/login', { email, password: 'wrong password!' }, '/login');
    expect(unknown.res.status).to.equal(401);
    expect(wrong.res.status).to.equal(401);
    const msg = (b: string) => /<p class="notice bad"[^>]*>([^<]*)</.exec(b)?.[1];
    expect(msg(unknown.body)).to.equal('Wrong email or password.').and.equal(msg(wrong.body));
    for (let i = 0; i < 4; i++) await c.post('/login', { email, password: 'wrong password!' }, '/login');
    const blocked = await c.post('/login', { email, password: PASSWORD }, '/login');
    expect(blocked.res.status).to.equal(429);
    expect(blocked.body).to.include('Too many log-in attempts');
    // Another address from the same IP still gets in, until the IP's own limit.
    const { email: second } = await signUp(open);
    expect((await c.post('/login', { email: second, password: PASSWORD }, '/login')).res.status).to.equal(302);
    const d = new Client(open.url);
    for (let i = 0; i < 14; i++) await d.post('/login', { email: `spray-${i}@example.com`, password: 'wrong password!' }, '/login');
    expect((await d.post('/login', { email: second, password: PASSWORD }, '/login')).res.status).to.equal(429);
    await t.db.deleteFrom('login_attempts').execute();
  });

  it('makes the session cookie Secure when RUNBOX_PUBLIC_URL is https', async () => {
    const secure = await start({ RUNBOX_PUBLIC_URL: 'https://portal.example' });
    const c = new Client(secure.url);
    await c.post('/signup', { email: `secure-${process.pid}@example.com`, password: PASSWORD }, '/signup', { Origin: 'https://portal.example' });
    const cookie = c.setCookies.find((s) => s.startsWith('rbx_session='))!;
    expect(cookie).to.include('HttpOnly').and.include('SameSite=Lax').and.include('Secure');
    const plain = (await signUp(open)).c.setCookies.find((s) => s.startsWith('rbx_session='))!;
    expect(plain).to.include('HttpOnly').and.include('SameSite=Lax').and.not.include('Secure');
  });

  it('RUNBOX_SIGNUP=closed refuses sign-up; invite takes the link that runbox-admin account invite prints, once', async () => {
    const closed = await start({ RUNBOX_SIGNUP: 'closed' });
    expect((await new Client(closed.url).request('/signup')).res.status).to.equal(403);
    expect((await new Client(closed.url).request('/signup', { form: { _csrf: 'x', email: 'a@example.com', password: PASSWORD } })).res.status).to.equal(403);

    const invite = await start({ RUNBOX_SIGNUP: 'invite' });
    const c = new Client(invite.url);
    expect((await c.request('/signup')).res.status).to.equal(403);
    const email = `invited-${process.pid}@example.com`;
    const printed = await cli(t.url, { RUNBOX_PUBLIC_URL: invite.url }, 'account', 'invite', '--email', email);
    expect(printed.code, printed.stderr).to.equal(0);
    const link = new URL(printed.json.link as string);
    expect(link.pathname).to.equal('/signup');
    const form = await c.request(link.pathname + link.search);
    expect(form.res.status).to.equal(200);
    expect(form.body).to.include(email);
    const { res } = await c.post('/signup', { invite: link.searchParams.get('invite')!, email: 'someone-else@example.com', password: PASSWORD }, link.pathname + link.search);
    expect(res.status).to.equal(302);
    // The account has the invited address, whatever the form said; the link is spent.
    expect((await c.request('/account')).body).to.include(email);
    expect((await new Client(invite.url).request(link.pathname + link.search)).res.status).to.equal(403);
    expect((await cli(t.url, {}, 'account', 'invite', '--email', email)).code).to.equal(2);
  });

  it('lets an account the CLI made set its password through runbox-admin account password-reset-link', async () => {
    const account = await createAccount(t.db, `cli-made-${process.pid}@example.com`);
    const printed = await cli(t.url, { RUNBOX_PUBLIC_URL: open.url }, 'account', 'password-reset-link', '--account', account.id);
    expect(printed.code, printed.stderr).to.equal(0);
    const link = new URL(printed.json.link as string);
    const c = new Client(open.url);
    // No password yet: log-in fails like any wrong password.
    expect((await c.post('/login', { email: account.email!, password: PASSWORD }, '/login')).res.status).to.equal(401);
    const short = await c.post('/reset', { token: link.searchParams.get('token')!, password: 'short' }, link.pathname + link.search);
    expect(short.res.status).to.equal(400);
    const set = await c.post('/reset', { token: link.searchParams.get('token')!, password: PASSWORD }, link.pathname + link.search);
    expect(set.res.headers.get('location')).to.equal('/login?reset=1');
    expect((await c.post('/login', { email: account.email!, password: PASSWORD }, '/login')).res.status).to.equal(302);
    expect((await new Client(open.url).request(link.pathname + link.search)).res.status).to.equal(404);
  });

  it('treats addresses alike whatever their case: of race@ and RACE@ signed up at once one account is made, and log-in takes any case', async () => {
    const email = `race-${process.pid}@example.com`;
    const variants = [email, email.toUpperCase()];
    const clients = variants.map(() => new Client(open.url));
    const tokens = await Promise.all(clients.map((c) => c.token('/signup')));
    const answers = await Promise.all(
      clients.map((c, i) => c.request('/signup', { form: { _csrf: tokens[i]!, email: variants[i]!, password: PASSWORD } })),
    );
    expect(answers.map((a) => a.res.status).sort()).to.deep.equal([302, 400]);
    expect(answers.find((a) => a.res.status === 400)!.body).to.include('an account with this address already exists');
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts WHERE lower(email) = ${email}`.execute(t.db);
    expect(rows[0]!.n).to.equal(1);
    // Log-in in yet another case reaches that account.
    const c = new Client(open.url);
    expect((await c.post('/login', { email: `Race-${process.pid}@Example.COM`, password: PASSWORD }, '/login')).res.status).to.equal(302);
    // The operator's tools see the address as taken in any case too.
    expect((await cli(t.url, {}, 'account', 'create', '--email', `RACE-${process.pid}@example.com`)).code).to.equal(2);
    expect((await cli(t.url, {}, 'account', 'invite', '--email', `race-${process.pid}@EXAMPLE.com`)).code).to.equal(2);
    let err: unknown;
    await createAccount(t.db, `rAcE-${process.pid}@example.com`).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(EmailTakenError);
  });

  it('counts a log-in attempt before checking its password: of 40 sent at once, at most the limit are checked', async () => {
    const { email } = await signUp(open);
    await t.db.deleteFrom('login_attempts').execute();
    const clients = Array.from({ length: 40 }, () => new Client(open.url));
    const tokens = await Promise.all(clients.map((c) => c.token('/login')));
    const answers = await Promise.all(clients.map((c, i) => c.request('/login', { form: { _csrf: tokens[i]!, email, password: 'wrong password!' } })));
    const statuses = answers.map((a) => a.res.status);
    // A 401 is a password that was checked; a 429 one that never was.
    expect(statuses.filter((s) => s === 401)).to.have.length(MAX_FAILURES_PER_ADDRESS);
    expect(statuses.filter((s) => s === 429)).to.have.length(40 - MAX_FAILURES_PER_ADDRESS);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM login_attempts WHERE email = ${email}`.execute(t.db);
    expect(rows[0]!.n).to.equal(MAX_FAILURES_PER_ADDRESS);
    // The right password now waits too.
    expect((await new Client(open.url).post('/login', { email, password: PASSWORD }, '/login')).res.status).to.equal(429);
    await t.db.deleteFrom('login_attempts').execute();
  });

  it('limits sign-ups per client address (RUNBOX_SIGNUPS_PER_HOUR), also when they are sent at once', async () => {
    const limited = await start({ RUNBOX_SIGNUPS_PER_HOUR: '3' });
    await t.db.deleteFrom('signup_attempts').execute();
    const clients = Array.from({ length: 6 }, () => new Client(limited.url));
    const tokens = await Promise.all(clients.map((c) => c.token('/signup')));
    const answers = await Promise.all(
      clients.map((c, i) => c.request('/signup', { form: { _csrf: tokens[i]!, email: `limited-${process.pid}-${i}@example.com`, password: PASSWORD } })),
    );
    const statuses = answers.map((a) => a.res.status);
    expect(statuses.filter((s) => s === 302)).to.have.length(3);
    expect(statuses.filter((s) => s === 429)).to.have.length(3);
    expect(answers.find((a) => a.res.status === 429)!.body).to.include('Too many sign-ups');
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM accounts WHERE email LIKE ${`limited-${process.pid}-%`}`.execute(t.db);
    expect(rows[0]!.n).to.equal(3);
    // A taken address counts as well: probing addresses costs the same allowance.
    await t.db.deleteFrom('signup_attempts').execute();
    const c = new Client(limited.url);
    const taken = `limited-${process.pid}-${statuses.indexOf(302)}@example.com`;
    for (let i = 0; i < 3; i++) expect((await c.post('/signup', { email: taken, password: PASSWORD })).res.status).to.equal(400);
    expect((await c.post('/signup', { email: `limited-${process.pid}-new@example.com`, password: PASSWORD })).res.status).to.equal(429);
    await t.db.deleteFrom('signup_attempts').execute();
  });

  it('ends outstanding reset links and other sessions when the password is changed', async () => {
    const { c, email } = await signUp(open);
    const account = (await findLogin(t.db, email))!;
    const other = new Client(open.url);
    expect((await other.post('/login', { email, password: PASSWORD }, '/login')).res.status).to.equal(302);
    const links = [];
    for (let i = 0; i < 2; i++) {
      const printed = await cli(t.url, { RUNBOX_PUBLIC_URL: open.url }, 'account', 'password-reset-link', '--account', account.id);
      expect(printed.code, printed.stderr).to.equal(0);
      const link = new URL(printed.json.link as string);
      links.push(link.pathname + link.search);
    }
    expect((await new Client(open.url).request(links[0]!)).res.status).to.equal(200);
    const changed = await c.post('/account/password', { current: PASSWORD, password: 'another long password' }, '/account');
    expect(changed.res.headers.get('location')).to.equal('/account?password=1');
    for (const link of links) expect((await new Client(open.url).request(link)).res.status, link).to.equal(404);
    const token = new URLSearchParams(links[1]!.split('?')[1]).get('token')!;
    // Not even by posting the form the page had shown.
    const anon = new Client(open.url);
    expect((await anon.post('/reset', { token, password: 'an attacker password' }, '/login')).res.status).to.equal(404);
    expect((await other.request('/account')).res.headers.get('location')).to.match(/^\/login/);
    expect((await c.request('/account')).res.status).to.equal(200);
    expect((await new Client(open.url).post('/login', { email, password: 'another long password' }, '/login')).res.status).to.equal(302);
  });

  it('ends the other reset links and every session when one reset link is used', async () => {
    const { c, email } = await signUp(open);
    const account = (await findLogin(t.db, email))!;
    const links = [];
    for (let i = 0; i < 2; i++) {
      const printed = await cli(t.url, { RUNBOX_PUBLIC_URL: open.url }, 'account', 'password-reset-link', '--account', account.id);
      links.push(new URL(printed.json.link as string));
    }
    const anon = new Client(open.url);
    const set = await anon.post('/reset', { token: links[0]!.searchParams.get('token')!, password: 'a reset password' }, links[0]!.pathname + links[0]!.search);
    expect(set.res.headers.get('location')).to.equal('/login?reset=1');
    expect((await anon.request(links[1]!.pathname + links[1]!.search)).res.status).to.equal(404);
    expect((await c.request('/account')).res.headers.get('location')).to.match(/^\/login/);
  });

  it('queues a callback once while it is pending, and limits Redeliver per account', async () => {
    const { c, email } = await signUp(open);
    const account = (await findLogin(t.db, email))!;
    const key = await createKey(t.db, { accountId: account.id, appName: 'hooks', redirectUrl: 'https://hooks.example/runbox' });
    const submission = await finishedSubmission(account.id, key.id);
    const path = `/submissions/${submission}`;
    const count = async () => (await t.db.selectFrom('callback_deliveries').select('id').where('submission_id', '=', submission).execute()).length;
    expect(await count()).to.equal(1);
    // No sender runs here: the first delivery is still pending, and 25 clicks at once add nothing.
    const token = await c.token(path);
    const clicks = await Promise.all(Array.from({ length: 25 }, () => c.request(`${path}/redeliver`, { form: { _csrf: token } })));
    for (const click of clicks) expect(click.res.headers.get('location')).to.equal(`${path}?pending=1`);
    expect(await count()).to.equal(1);
    expect((await c.request(`${path}?pending=1`)).body).to.include('still pending; it was not queued again');
    // Once it is delivered, 25 clicks at once queue exactly one more.
    const delivered = () => sql`UPDATE callback_deliveries SET state = 'delivered', delivered_at = now() WHERE submission_id = ${submission}`.execute(t.db);
    await delivered();
    const again = await Promise.all(Array.from({ length: 25 }, () => c.request(`${path}/redeliver`, { form: { _csrf: token } })));
    expect(again.filter((a) => a.res.headers.get('location') === `${path}?redelivered=1`)).to.have.length(1);
    expect(await count()).to.equal(2);
    for (let i = 1; i < PORTAL_REDELIVERIES_PER_WINDOW; i++) {
      await delivered();
      expect((await c.request(`${path}/redeliver`, { form: { _csrf: token } })).res.status).to.equal(302);
    }
    await delivered();
    const refused = await c.request(`${path}/redeliver`, { form: { _csrf: token } });
    expect(refused.res.status).to.equal(429);
    expect(refused.body).to.include(`You can redeliver ${PORTAL_REDELIVERIES_PER_WINDOW} results in 60 minutes`);
    expect(await count()).to.equal(1 + PORTAL_REDELIVERIES_PER_WINDOW);
    // The operator is not limited.
    const printed = await cli(t.url, {}, 'callback', 'redeliver', '--submission', submission);
    expect(printed.code, printed.stderr).to.equal(0);
    expect(printed.json).to.include({ already_queued: false });
    expect(await count()).to.equal(2 + PORTAL_REDELIVERIES_PER_WINDOW);
    // Another account's limit is its own.
    const { c: c2, email: email2 } = await signUp(open);
    const account2 = (await findLogin(t.db, email2))!;
    const key2 = await createKey(t.db, { accountId: account2.id, appName: 'hooks', redirectUrl: 'https://hooks.example/runbox' });
    const submission2 = await finishedSubmission(account2.id, key2.id);
    await sql`UPDATE callback_deliveries SET state = 'dead' WHERE submission_id = ${submission2}`.execute(t.db);
    const other = await c2.post(`/submissions/${submission2}/redeliver`, {}, `/submissions/${submission2}`);
    expect(other.res.headers.get('location')).to.equal(`/submissions/${submission2}?redelivered=1`);
  });

  describe('problems and the playground form', () => {
    const pkg = (entries: Record<string, string>) => new Blob([new Uint8Array(makeZip(Object.entries(entries).map(([name, content]) => ({ name, content }))))], { type: 'application/zip' });
    const upload = async (c: Client, file: Blob | null, token: string | null, headers: Record<string, string> = {}) => {
      const form = new FormData();
      if (token !== null) form.append('_csrf', token);
      if (file) form.append('package', file, 'problem.zip');
      return c.request('/problems', { method: 'POST', body: form, headers });
    };
    const problemsOf = async (email: string) =>
      (await t.db.selectFrom('problems').innerJoin('accounts', 'accounts.id', 'problems.account_id').select('problems.id').where('accounts.email', '=', email).where('problems.deleted_at', 'is', null).execute()).map((r) => r.id);

    it('uploads a package with a multipart form (its token checked), shows it; a bad one is refused with why and nothing stored; another account gets 404', async () => {
      const { c, email } = await signUp(open);
      const good = pkg({ 'problem.yaml': 'name: Echo\nlicense: cc0\n', 'problem_statement/problem.en.tex': 'x', 'data/sample/1.in': 'hi\n', 'data/sample/1.ans': 'hi\n', 'data/secret/2.in': 'x\n', 'data/secret/2.ans': 'x\n' });
      expect((await upload(c, good, null)).res.status, 'no token').to.equal(403);
      expect((await upload(c, good, await c.token('/problems'), { Origin: 'https://evil.example' })).res.status, 'another site').to.equal(403);
      expect(await problemsOf(email)).to.deep.equal([]);
      const bad = await upload(c, pkg({ 'data/sample/1.in': 'hi\n' }), await c.token('/problems'));
      expect(bad.res.status).to.equal(400);
      expect(bad.body).to.match(/class="field-error" id="f-package-error" role="alert">The package was not stored: [^<]*1\.in[^<]*\.ans/);
      expect(bad.body).to.include('aria-invalid="true"');
      const none = await upload(c, null, await c.token('/problems'));
      expect([none.res.status, none.body.includes('Choose a problem package')]).to.deep.equal([400, true]);
      expect(await problemsOf(email)).to.deep.equal([]);
      const made = await upload(c, good, await c.token('/problems'));
      expect(made.res.status).to.equal(303);
      const [id] = await problemsOf(email);
      expect(made.res.headers.get('location')).to.equal(`/problems/${id}?created=1`);
      const shown = await c.follow(made);
      expect(shown.res.status).to.equal(200);
      expect(shown.body).to.include('<h1>Echo</h1>').and.include('The problem is stored.').and.include('sample/1').and.include('secret/2');
      // The package's report: its format, what was read, and what was ignored with why.
      expect(shown.body).to.include('Format legacy; type pass-fail; no time limit stated.');
      // Its LaTeX statement is read (offered as a download on the problem's page), not ignored.
      expect(shown.body).to.match(/<li>problem_statement\/problem\.en\.tex<\/li>/);
      expect(shown.body).to.not.include('data-ignored="problem_statement/"');
      expect(shown.body).to.include('<tr data-ignored="problem.yaml: license">');
      expect(shown.body).to.match(/<li>problem\.yaml: name<\/li>/);
      expect((await c.request('/problems')).body).to.include(`href="/problems/${id}"`);
      // Another account: 404 to see it, and to delete it.
      const other = (await signUp(open)).c;
      expect((await other.request(`/problems/${id}`)).res.status).to.equal(404);
      expect((await other.request(`/problems/${id}/delete`)).res.status).to.equal(404);
      expect((await other.post(`/problems/${id}/delete`, {}, '/problems')).res.status).to.equal(404);
      expect(await problemsOf(email)).to.deep.equal([id]);
      const gone = await c.post(`/problems/${id}/delete`, {}, `/problems/${id}/delete`);
      expect([gone.res.status, gone.res.headers.get('location')]).to.deep.equal([303, '/problems?deleted=1']);
      expect(await problemsOf(email)).to.deep.equal([]);
      expect((await c.request(`/problems/${id}`)).res.status).to.equal(404);
    });

    it("an interactive problem's sample .interaction is shown as the dialogue it is; a multi-pass one's pass by pass", async () => {
      const { c, email } = await signUp(open);
      const interactive = pkg({
        'problem.yaml': 'name: Guess\nvalidation: custom interactive\n',
        'data/sample/1.in': '7\n',
        'data/sample/1.ans': '\n',
        'data/sample/1.interaction': '<lower or higher?\n>5\n<higher\n>7 & <done>\n<correct\n',
        'data/secret/1.in': '3\n',
        'data/secret/1.ans': '\n',
        'output_validators/guess/interactor.py': 'import sys\nsys.exit(42)\n',
      });
      const made = await upload(c, interactive, await c.token('/problems'));
      expect(made.res.status, made.body).to.equal(303);
      const shown = await c.follow(made);
      const dialogue = /<ol class="dialogue" aria-label="sample\/1, interaction">([\s\S]*?)<\/ol>/.exec(shown.body);
      expect(dialogue, 'the dialogue list').to.not.equal(null);
      const turns = [...dialogue![1]!.matchAll(/<li data-from="(\w+)"><span class="who">(\w+)<\/span><pre>([^<]*)<\/pre><\/li>/g)].map((m) => [m[1], m[2], m[3]]);
      expect(turns).to.deep.equal([
        ['judge', 'Judge', 'lower or higher?'],
        ['program', 'Program', '5'],
        ['judge', 'Judge', 'higher'],
        ['program', 'Program', '7 &amp; &lt;done>'],
        ['judge', 'Judge', 'correct'],
      ]);
      const multiPass = pkg({
        'problem.yaml': 'name: Twice\nvalidation: custom multi-pass\n',
        'data/sample/1.in': 'first 3\n',
        'data/sample/1.ans': '\n',
        'data/sample/1.interaction': '<first 3\n>6\n---\n<second 6\n>12\n',
        'output_validators/twice/validator.py': 'import sys\nsys.exit(42)\n',
      });
      const second = await c.follow(await upload(c, multiPass, await c.token('/problems')));
      expect(second.body).to.include('<h4>Pass 1</h4>').and.include('<h4>Pass 2</h4>');
      expect(second.body).to.match(/aria-label="sample\/1, pass 2, input"[^>]*>second 6\n<\/pre>/);
      expect(second.body).to.match(/aria-label="sample\/1, pass 2, output"[^>]*>12\n<\/pre>/);
      // A line that is no turn refuses the package, naming the file and the line.
      const bad = await upload(c, pkg({ ...{ 'problem.yaml': 'name: Guess\nvalidation: custom interactive\n', 'data/sample/1.in': '7\n', 'data/sample/1.ans': '\n', 'output_validators/guess/interactor.py': 'import sys\nsys.exit(42)\n' }, 'data/sample/1.interaction': '<ok\nno prefix\n' }), await c.token('/problems'));
      expect(bad.res.status).to.equal(400);
      expect(bad.body).to.match(/data\/sample\/1\.interaction: line 2 does not start with &lt; or >/);
      expect(await problemsOf(email)).to.have.length(2);
    });

    it(`problem writes count with the API's: past ${PROBLEM_LIMITS.writesPerMinute} a minute an upload or a delete is answered 429 with Retry-After, nothing stored`, async () => {
      const { c, email } = await signUp(open);
      const good = pkg({ 'tests/1.in': '1\n', 'tests/1.out': '1\n' });
      const made = await upload(c, good, await c.token('/problems'));
      expect(made.res.status).to.equal(303);
      const [id] = await problemsOf(email);
      // The rest of the minute's writes, as the API would have counted them.
      const accountId = (await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
      await t.db.insertInto('problem_writes').values(Array.from({ length: PROBLEM_LIMITS.writesPerMinute - 1 }, () => ({ account_id: accountId }))).execute();
      const refused = await upload(c, good, await c.token('/problems'));
      expect(refused.res.status).to.equal(429);
      expect(Number(refused.res.headers.get('retry-after'))).to.be.within(1, 60);
      expect(refused.body).to.match(new RegExp(`You can store, replace or delete ${PROBLEM_LIMITS.writesPerMinute} problems a minute\\. Try again in \\d+ seconds\\.`));
      const notDeleted = await c.post(`/problems/${id}/delete`, {}, `/problems/${id}/delete`);
      expect(notDeleted.res.status).to.equal(429);
      expect(await problemsOf(email)).to.deep.equal([id]);
    });

    it('the playground form posts without JavaScript: Add a file and Remove answer with the form changed; Run only through one of your API keys; the token is checked', async () => {
      const { c, email } = await signUp(open);
      const accountId = (await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
      const own = await createKey(t.db, { accountId, appName: 'mine' });
      const otherAccount = await createAccount(t.db, `other-${process.pid}-${++seq}@example.com`);
      const foreign = await createKey(t.db, { accountId: otherAccount.id, appName: 'theirs' });
      const form = (op: string, extra: [string, string][] = []) => {
        const body = new URLSearchParams([['key_id', own.id], ['compiler', 'python-3.9.7'], ['file_name', 'main.py'], ['file_content', 'import helper'], ['main', '0'], ['op', op], ...extra]);
        return body;
      };
      const post = async (body: URLSearchParams, token: string | null) => {
        if (token !== null) body.set('_csrf', token);
        return c.request('/playground', { method: 'POST', body: body.toString(), headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
      };
      const names = (html: string) => [...html.matchAll(/name="file_name" type="text" value="([^"]*)"/g)].map((m) => m[1]);
      expect((await post(form('add-file'), null)).res.status).to.equal(403);
      const added = await post(form('add-file'), await c.token('/playground'));
      expect(added.res.status).to.equal(200);
      expect(names(added.body)).to.deep.equal(['main.py', 'file2.py']);
      const removed = await post(form('remove-file:0', [['file_name', 'helper.py'], ['file_content', 'x = 1']]), await c.token('/playground'));
      expect(names(removed.body)).to.deep.equal(['helper.py']);
      expect(removed.body).to.include('>x = 1</textarea>');
      const tests = await post(form('add-test', [['test_input', '1'], ['test_expected', '2']]), await c.token('/playground'));
      expect([...tests.body.matchAll(/<h3 class="test-title">([^<]*)<\/h3>/g)].map((m) => m[1])).to.deep.equal(['Test 1', 'Test 2', 'Test __n__']);
      const refused = await post(new URLSearchParams([...form('run')].map(([k, v]) => [k, k === 'key_id' ? foreign.id : v])), await c.token('/playground'));
      expect(refused.res.status).to.equal(400);
      expect(refused.body).to.include('data-status="refused">Choose one of your API keys.</p>');
      const rules = await post(form('run', [['args', 'a\nb']].concat([['compiler_options', '-O2']]) as [string, string][]), await c.token('/playground'));
      expect(rules.res.status).to.equal(400);
      expect(rules.body).to.match(/data-status="refused">[^<]*compiler options do not apply/);
      const runs = await t.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
      expect(runs, 'nothing admitted').to.deep.equal([]);
    });
  });

  describe('with RUNBOX_SMTP_URL', () => {
    let smtp: Awaited<ReturnType<typeof smtpServer>>;
    let mailed: TestApi;
    before(async () => {
      smtp = await smtpServer();
      mailed = await start({ RUNBOX_SMTP_URL: smtp.url, RUNBOX_PUBLIC_URL: 'http://portal.test' });
    });
    after(() => smtp?.close());
    const linkIn = (mail: string, path: string) => {
      const m = new RegExp(`http://portal\\.test(${path}\\?token=[A-Za-z0-9_-]+)`).exec(mail.replace(/=\r?\n/g, '').replace(/=3D/g, '='));
      if (!m) throw new Error(`no ${path} link in ${mail}`);
      return m[1]!;
    };

    it('verifies a new address by an emailed link before keys can be created', async () => {
      const email = `verify-${process.pid}@example.com`;
      const { c } = await signUp(mailed, email);
      expect(c.setCookies.filter((k) => k.startsWith('rbx_session='))).to.have.length(1, 'a session only from the log-in');
      expect((await c.request('/keys/new')).res.status).to.equal(403);
      expect((await c.request('/keys')).body).to.include('Confirm your email address');
      const mail = smtp.mails.find((m) => m.includes(email))!;
      expect(mail).to.include('confirm your email address');
      const confirmed = await c.request(linkIn(mail, '/verify'));
      expect(confirmed.res.status).to.equal(200);
      expect((await c.request('/keys/new')).res.status).to.equal(200);
      expect((await c.request(linkIn(mail, '/verify'))).res.status).to.equal(404);
    });

    it('answers a sign-up with a taken address like a new one, and tells the owner by email instead', async () => {
      const email = `taken-${process.pid}@example.com`;
      const fresh = new Client(mailed.url);
      const first = await fresh.post('/signup', { email, password: PASSWORD });
      const before = smtp.mails.length;
      const again = new Client(mailed.url);
      const second = await again.post('/signup', { email: email.toUpperCase(), password: 'the intruder password' });
      // The same page, apart from the address as typed; no session either way.
      expect(first.res.status).to.equal(200);
      expect(second.res.status).to.equal(200);
      const page = (b: string, typed: string) => /<main[\s\S]*<\/main>/.exec(b)![0].replace(typed, 'ADDRESS');
      expect(page(second.body, email.toUpperCase())).to.equal(page(first.body, email));
      expect(first.body).to.include('Check your email');
      expect(second.body).not.to.include('already');
      expect(fresh.cookies.has('rbx_session')).to.equal(false);
      expect(again.cookies.has('rbx_session')).to.equal(false);
      // One email to the owner's stored address: a note, not a confirmation link.
      expect(smtp.mails.length).to.equal(before + 1);
      const note = smtp.mails.at(-1)!.replace(/=\r?\n/g, '');
      expect(note).to.include(`To: ${email}`).and.include('already has an account').and.include('http://portal.test/forgot');
      expect(note).not.to.include('/verify?token');
      // The account is as it was: its own password works, the second one does not.
      expect((await new Client(mailed.url).post('/login', { email, password: 'the intruder password' }, '/login')).res.status).to.equal(401);
      expect((await new Client(mailed.url).post('/login', { email, password: PASSWORD }, '/login')).res.status).to.equal(302);
    });

    it('sends a reset link for a forgotten password, and answers the same for unknown addresses', async () => {
      const { email } = await signUp(mailed);
      const c = new Client(mailed.url);
      const before = smtp.mails.length;
      const unknown = await c.post('/forgot', { email: `nobody-${process.pid}@example.com` });
      // The address in another case is the same address.
      const known = await c.post('/forgot', { email: email.toUpperCase() });
      expect(unknown.body).to.include('If an account has this address');
      expect(known.body).to.include('If an account has this address');
      expect(smtp.mails.length).to.equal(before + 1);
      const path = linkIn(smtp.mails.at(-1)!, '/reset');
      expect((await c.post('/reset', { token: new URLSearchParams(path.split('?')[1]).get('token')!, password: 'brand new password' }, path)).res.status).to.equal(302);
      expect((await c.post('/login', { email, password: 'brand new password' }, '/login')).res.status).to.equal(302);
    });
  });
});
