import { expect } from 'chai';
import { createAccount, getAccount, setAccountLimits } from '../../src/accounts/accounts.js';
import { createKey } from '../../src/accounts/keys.js';
import { upsertPlan } from '../../src/accounts/plans.js';
import { systemClock } from '../../src/util/clock.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { errorOf, fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// Calls through an API marketplace, simulated as RapidAPI sends them (its proxy secret,
// the subscriber, their subscription) against the real API and database; and the
// rate-limit headers of run and usage answers, marketplace or not.

const SECRET = 'marketplace-proxy-secret-for-tests';
const MARKET_ENV = { RUNBOX_MARKETPLACE_PROXY_SECRET: SECRET, RUNBOX_MARKETPLACE_PLANS: 'BASIC:free,PRO:pro,TINY:tiny,BURST:burst,GHOST:nope' };
const RUN = { code: 'print(1)', compiler: 'python-3.9.7' };

function market(user: string, subscription = 'BASIC', secret: string | null = SECRET): Record<string, string> {
  return {
    ...(secret !== null ? { 'X-RapidAPI-Proxy-Secret': secret } : {}),
    'X-RapidAPI-User': user,
    'X-RapidAPI-Subscription': subscription,
    'X-RapidAPI-Host': 'runbox.p.rapidapi.com',
  };
}

const rateHeaders = (res: Response) => ({
  limit: res.headers.get('x-ratelimit-limit'),
  remaining: res.headers.get('x-ratelimit-remaining'),
  reset: res.headers.get('x-ratelimit-reset'),
  requestsLimit: res.headers.get('x-ratelimit-requests-limit'),
  requestsRemaining: res.headers.get('x-ratelimit-requests-remaining'),
});

describe('API marketplace and rate-limit headers', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let plain: TestApi;
  const clock = new TestClock(new Date('2026-06-10T12:00:00Z'));

  before(async () => {
    t = await freshDatabase('marketplace');
    images = fakeImagesDir(['python-3.9.7']);
    await upsertPlan(t.db, 'pro', { monthlyLimit: 1000, perMinute: 100, pending: 100 });
    await upsertPlan(t.db, 'tiny', { monthlyLimit: 2, perMinute: 100, pending: 100 });
    await upsertPlan(t.db, 'burst', { monthlyLimit: 1000, perMinute: 5, pending: 1000 });
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir, MARKET_ENV), clock });
    // The same service without the marketplace configured.
    plain = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock });
  });
  after(async () => {
    await plain?.close();
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  const subscriber = (user: string) =>
    t.db.selectFrom('accounts').select(['id', 'email', 'plan', 'marketplace_user']).where('marketplace_user', '=', user).execute();

  it('accepts a call with the proxy secret, without a key, as an account of the subscriber made on the first call', async () => {
    const res = await postRun(api.url, undefined, RUN, market('alice'));
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal('Ok');
    const id = res.headers.get('x-submission-id')!;
    const accounts = await subscriber('alice');
    expect(accounts).to.have.length(1);
    expect(accounts[0]).to.include({ email: null, plan: 'free', marketplace_user: 'alice' });
    const row = await t.db.selectFrom('submissions').select(['account_id', 'key_id']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ account_id: accounts[0]!.id, key_id: null });
    // No key, so no callback: the result is read by lookup.
    const deliveries = await t.db.selectFrom('callback_deliveries').select('id').where('submission_id', '=', id).execute();
    expect(deliveries).to.have.length(0);
    const lookup = await fetch(`${api.url}/api/v2/submissions/${id}`, { headers: market('alice') });
    expect(lookup.status).to.equal(200);
    expect(((await lookup.json()) as { id: string; state: string }).state).to.equal('queued');
    // Another subscriber cannot see it.
    expect((await fetch(`${api.url}/api/v2/submissions/${id}`, { headers: market('mallory') })).status).to.equal(404);
    // A second call is the same account.
    expect((await postRun(api.url, undefined, RUN, market('alice'))).status).to.equal(200);
    expect(await subscriber('alice')).to.have.length(1);
    const limits = await fetch(`${api.url}/api/limits/`, { headers: market('alice') });
    expect(limits.status).to.equal(200);
  });

  it('answers 401 to marketplace headers with a wrong or missing secret, whatever else the call carries', async () => {
    const owner = await createAccount(t.db, 'key-owner@example.com');
    const key = await createKey(t.db, { accountId: owner.id, appName: 'direct' });
    for (const headers of [market('eve', 'PRO', 'wrong'), market('eve', 'PRO', null), market('eve', 'PRO', SECRET + 'x'), { 'X-RapidAPI-Proxy-Secret': 'wrong' }]) {
      const res = await postRun(api.url, undefined, RUN, headers);
      expect(res.status).to.equal(401);
      expect((await errorOf(res)).code).to.equal('invalid_proxy_secret');
      // A valid key does not make a forged marketplace call acceptable.
      expect((await postRun(api.url, key.key, RUN, headers)).status).to.equal(401);
    }
    const noUser = await postRun(api.url, undefined, RUN, { 'X-RapidAPI-Proxy-Secret': SECRET });
    expect(noUser.status).to.equal(401);
    expect((await errorOf(noUser)).code).to.equal('invalid_marketplace_user');
    expect(await subscriber('eve')).to.have.length(0);
    // Without marketplace headers the key works as ever.
    expect((await postRun(api.url, key.key, RUN)).status).to.equal(200);
  });

  it('without RUNBOX_MARKETPLACE_PROXY_SECRET the marketplace headers mean nothing', async () => {
    const res = await postRun(plain.url, undefined, RUN, market('trudy'));
    expect(res.status).to.equal(401);
    expect((await errorOf(res)).code).to.equal('missing_key');
    const owner = await createAccount(t.db, 'plain-owner@example.com');
    const key = await createKey(t.db, { accountId: owner.id, appName: 'direct' });
    const withKey = await postRun(plain.url, key.key, RUN, market('trudy'));
    expect(withKey.status).to.equal(200);
    const row = await t.db.selectFrom('submissions').select('account_id').where('id', '=', withKey.headers.get('x-submission-id')!).executeTakeFirstOrThrow();
    expect(row.account_id).to.equal(owner.id);
    expect(await subscriber('trudy')).to.have.length(0);
  });

  it('maps the subscription to a plan (unknown names and missing plans: Free) and follows a change of subscription', async () => {
    expect((await postRun(api.url, undefined, RUN, market('paul', 'PRO'))).status).to.equal(200);
    expect((await subscriber('paul'))[0]!.plan).to.equal('pro');
    expect((await postRun(api.url, undefined, RUN, market('uma', 'ULTRA'))).status).to.equal(200);
    expect((await subscriber('uma'))[0]!.plan).to.equal('free');
    expect((await postRun(api.url, undefined, RUN, market('gus', 'GHOST'))).status).to.equal(200);
    expect((await subscriber('gus'))[0]!.plan).to.equal('free');
    // Names are matched without regard to case; a downgrade moves the account back.
    expect((await postRun(api.url, undefined, RUN, market('uma', 'pro'))).status).to.equal(200);
    expect((await subscriber('uma'))[0]!.plan).to.equal('pro');
    expect((await postRun(api.url, undefined, RUN, market('paul', 'BASIC'))).status).to.equal(200);
    expect((await subscriber('paul'))[0]!.plan).to.equal('free');
    const account = await getAccount(t.db, (await subscriber('uma'))[0]!.id);
    expect(account).to.include({ email: null, marketplace_user: 'uma', plan: 'pro' });
  });

  it("keeps two subscribers' allowances apart", async () => {
    for (let i = 0; i < 2; i++) expect((await postRun(api.url, undefined, RUN, market('tina', 'TINY'))).status).to.equal(200);
    const spent = await postRun(api.url, undefined, RUN, market('tina', 'TINY'));
    expect(spent.status).to.equal(429);
    expect((await errorOf(spent)).code).to.equal('monthly_limit');
    expect(spent.headers.get('retry-after')).to.match(/^\d+$/);
    expect(rateHeaders(spent)).to.include({ requestsLimit: '2', requestsRemaining: '0' });
    const other = await postRun(api.url, undefined, RUN, market('tom', 'TINY'));
    expect(other.status).to.equal(200);
    expect(rateHeaders(other)).to.include({ requestsLimit: '2', requestsRemaining: '1' });
    // No address, so no usage emails at 80% and 100%: the marketplace tells its subscribers.
    const tina = (await subscriber('tina'))[0]!;
    expect(await t.db.selectFrom('usage_emails').select('id').where('account_id', '=', tina.id).execute()).to.have.length(0);
  });

  it('answers GET /api/usage/ with the account record and no key object', async () => {
    for (let i = 0; i < 3; i++) expect((await postRun(api.url, undefined, RUN, market('ursula', 'PRO'))).status).to.equal(200);
    const res = await fetch(`${api.url}/api/usage/`, { headers: market('ursula', 'PRO') });
    expect(res.status).to.equal(200);
    const usage = (await res.json()) as Record<string, unknown>;
    expect(usage).to.not.have.property('key');
    expect(usage).to.include({ month: '2026-06', submissions: 3, monthly_limit: 1000, remaining: 997, submissions_per_minute: 100 });
    expect(rateHeaders(res)).to.deep.equal({ limit: '100', remaining: '97', reset: '60', requestsLimit: '1000', requestsRemaining: '997' });
  });

  it('carries exact rate-limit headers on run, usage and refused answers of an API key; 429 has Retry-After', async () => {
    clock.set('2026-06-11T08:00:00Z');
    const owner = await createAccount(t.db, 'headers@example.com');
    await setAccountLimits(t.db, owner.id, { perMinute: 3, monthlyLimit: 10, pending: 100 });
    const key = await createKey(t.db, { accountId: owner.id, appName: 'paced', monthlyLimit: 4 });
    const first = await postRun(api.url, key.key, RUN);
    expect(first.status).to.equal(200);
    // Requests-Limit: the key's own limit, lower than the account's 10.
    expect(rateHeaders(first)).to.deep.equal({ limit: '3', remaining: '2', reset: '60', requestsLimit: '4', requestsRemaining: '3' });
    clock.advanceMs(20_000);
    expect(rateHeaders(await postRun(api.url, key.key, RUN))).to.deep.equal({ limit: '3', remaining: '1', reset: '40', requestsLimit: '4', requestsRemaining: '2' });
    // A refused body is answered with the headers too, and counts nothing.
    const bad = await postRun(api.url, key.key, { code: 'x' });
    expect(bad.status).to.equal(400);
    expect(rateHeaders(bad)).to.deep.equal({ limit: '3', remaining: '1', reset: '40', requestsLimit: '4', requestsRemaining: '2' });
    expect(rateHeaders(await postRun(api.url, key.key, RUN))).to.include({ remaining: '0', requestsRemaining: '1' });
    const limited = await postRun(api.url, key.key, RUN);
    expect(limited.status).to.equal(429);
    expect((await errorOf(limited)).code).to.equal('rate_limited');
    expect(limited.headers.get('retry-after')).to.equal('40');
    expect(rateHeaders(limited)).to.deep.equal({ limit: '3', remaining: '0', reset: '40', requestsLimit: '4', requestsRemaining: '1' });
    const usage = await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } });
    expect(rateHeaders(usage)).to.deep.equal({ limit: '3', remaining: '0', reset: '40', requestsLimit: '4', requestsRemaining: '1' });
    clock.advanceMs(41_000); // the first submission has left the window
    expect(rateHeaders(await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } }))).to.include({ remaining: '1', reset: '19' });
    // No caller, no figures.
    const anonymous = await postRun(api.url, undefined, RUN);
    expect(anonymous.status).to.equal(401);
    expect(anonymous.headers.get('x-ratelimit-limit')).to.equal(null);
  });

  describe('under a concurrent burst, across two API processes', () => {
    let second: ApiProcess;
    let live: TestApi;
    before(async () => {
      // Both read the system clock, as production hosts do.
      live = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir, MARKET_ENV), clock: systemClock });
      second = await spawnApiProcess({ RUNBOX_DATABASE_URL: t.url, RUNBOX_IMAGES_DIR: images.dir, ...MARKET_ENV });
    });
    after(async () => {
      await second?.stop();
      await live?.close();
    });

    it("a new subscriber's first 30 calls at once make one account and admit exactly the plan's 5 per minute", async () => {
      const urls = [live.url, second.url];
      const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => postRun(urls[i % 2]!, undefined, RUN, market('carol', 'BURST'))));
      const statuses = answers.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(5);
      expect(statuses.filter((s) => s === 429)).to.have.length(25);
      for (const r of answers.filter((a) => a.status === 429)) {
        expect((await errorOf(r)).code).to.equal('rate_limited');
        expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
        expect(rateHeaders(r)).to.include({ limit: '5', remaining: '0' });
      }
      const remaining = answers.filter((a) => a.status === 200).map((r) => r.headers.get('x-ratelimit-remaining')).sort();
      expect(remaining).to.deep.equal(['0', '1', '2', '3', '4']);
      const accounts = await subscriber('carol');
      expect(accounts).to.have.length(1);
      const stored = await t.db.selectFrom('submissions').select('id').where('account_id', '=', accounts[0]!.id).execute();
      expect(stored).to.have.length(5);
    });
  });
});

describe('API marketplace: synchronous runs', function () {
  let s: ResultsStack;
  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('marketplace_sync', { ...MARKET_ENV, ...(uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {}) });
    await s.startRunner();
  });
  after(async () => s?.close());

  it('runs through the marketplace and answers with the result and the rate-limit headers', async () => {
    const res = await fetch(`${s.url}/api/v2/run-code-sync/`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...market('sam') },
      body: JSON.stringify({ code: 'print(6 * 7)', compiler: 'python-3.9.7' }),
    });
    expect(res.status).to.equal(200);
    expect(await res.json()).to.include({ status: 'success', output: '42\n' });
    expect(rateHeaders(res)).to.include({ limit: '30', remaining: '29', requestsLimit: '100000', requestsRemaining: '99999' });
    const id = res.headers.get('x-submission-id')!;
    const lookup = await fetch(`${s.url}/api/v2/submissions/${id}`, { headers: market('sam') });
    expect(((await lookup.json()) as { result: { output: string } }).result.output).to.equal('42\n');
  });
});
