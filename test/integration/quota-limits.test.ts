import { expect } from 'chai';
import { refundSubmission } from '../../src/quota/refund.js';
import { accountWithKey, counters, errorOf, fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { createKey } from '../../src/accounts/keys.js';
import { FREE_PLAN, INTERACTOR_MARGIN_MS, requestSandboxMs } from '../../src/limits.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// The per-account limits, exactly at their boundaries, with an injected clock for the
// rolling minute and the month roll-over; and refunds.

describe('quota limits', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  const clock = new TestClock();
  const run = { code: 'x', input: '', compiler: 'gcc-4.9' };

  before(async () => {
    t = await freshDatabase('quota_limits');
    images = fakeImagesDir(['gcc-4.9', 'gcc-9', 'python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  async function submit(key: string, body: object = run): Promise<Response> {
    return postRun(api.url, key, body);
  }

  async function expect429(res: Response, code: string): Promise<number> {
    expect(res.status).to.equal(429);
    expect((await errorOf(res)).code).to.equal(code);
    const retry = res.headers.get('retry-after');
    expect(retry).to.match(/^\d+$/);
    return Number(retry);
  }

  describe('submissions per rolling minute', () => {
    it('admits 30, refuses the 31st with Retry-After, and admits again once the window has moved', async () => {
      clock.set('2026-05-10T10:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000 } });
      for (let i = 0; i < 30; i++) expect((await submit(key.key)).status, `submission ${i + 1}`).to.equal(200);
      const before = await counters(t.db, accountId);
      expect(await expect429(await submit(key.key), 'rate_limited')).to.equal(60);
      expect(await counters(t.db, accountId)).to.deep.equal(before);
      clock.advanceMs(59_999);
      expect(await expect429(await submit(key.key), 'rate_limited')).to.equal(1);
      clock.advanceMs(1);
      expect((await submit(key.key)).status).to.equal(200);
      expect((await counters(t.db, accountId)).submissions).to.equal(31);
    });

    it('is a rolling window, not a calendar minute', async () => {
      clock.set('2026-05-10T11:00:50Z');
      const { key } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 4 } });
      expect((await submit(key.key)).status).to.equal(200);
      expect((await submit(key.key)).status).to.equal(200);
      clock.advanceMs(20_000); // 11:01:10, a new calendar minute
      expect((await submit(key.key)).status).to.equal(200);
      expect((await submit(key.key)).status).to.equal(200);
      expect(await expect429(await submit(key.key), 'rate_limited')).to.equal(40);
      clock.advanceMs(40_000); // the first two leave the window
      expect((await submit(key.key)).status).to.equal(200);
      expect((await submit(key.key)).status).to.equal(200);
      await expect429(await submit(key.key), 'rate_limited');
    });

    it('counts across all keys of the account', async () => {
      clock.set('2026-05-10T12:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 3 } });
      const other = await createKey(t.db, { accountId, appName: 'second' });
      expect((await submit(key.key)).status).to.equal(200);
      expect((await submit(other.key)).status).to.equal(200);
      expect((await submit(key.key)).status).to.equal(200);
      await expect429(await submit(other.key), 'rate_limited');
    });
  });

  describe('tests toward the rolling minute', () => {
    const tests = (n: number) => Array.from({ length: n }, (_, i) => ({ input: String(i) }));
    const usage = async (key: string) => {
      const res = await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key } });
      expect(res.status).to.equal(200);
      return { body: (await res.json()) as { current: { submissions_last_minute: number } }, remaining: res.headers.get('x-ratelimit-remaining') };
    };

    it('a 10-test request leaves 20 of 30 for the minute: in X-RateLimit-* and in GET /api/usage/', async () => {
      clock.set('2026-05-11T10:00:00Z');
      const { key } = await accountWithKey(t.db, { limits: { sandboxSecondsPerRequest: 1000 } });
      const res = await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(10) });
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-ratelimit-limit')).to.equal('30');
      expect(res.headers.get('x-ratelimit-remaining')).to.equal('20');
      expect(res.headers.get('x-ratelimit-reset')).to.equal('60');
      const { body, remaining } = await usage(key.key);
      expect(body.current.submissions_last_minute).to.equal(10);
      expect(remaining).to.equal('20');
      // A one-test request takes one more.
      expect((await submit(key.key)).headers.get('x-ratelimit-remaining')).to.equal('19');
    });

    it('a request whose tests exceed what is left of the minute is refused 429 with nothing billed, then admitted when the window has room', async () => {
      clock.set('2026-05-11T11:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000, testsPerRequest: 30, sandboxSecondsPerRequest: 10_000 } });
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(5) })).status).to.equal(200);
      clock.advanceMs(10_000);
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(20) })).status).to.equal(200);
      clock.advanceMs(10_000); // 25 of 30 taken: 5 left
      const before = await counters(t.db, accountId);
      // 6 tests: one more than is left; room once the first request (5 tests) leaves, 40 s on.
      const six = await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(6) });
      expect(await expect429(six.clone(), 'rate_limited')).to.equal(40);
      expect((await errorOf(six)).message).to.match(/this request has 6 tests and 5 are left in the minute/);
      expect(six.headers.get('x-ratelimit-remaining')).to.equal('5');
      // 11 tests need the second request (20 tests) gone too: 50 s on.
      expect(await expect429(await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(11) }), 'rate_limited')).to.equal(50);
      expect(await counters(t.db, accountId)).to.deep.equal(before);
      expect((await usage(key.key)).body.current.submissions_last_minute).to.equal(25);
      // What is left is admitted, exactly.
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(5) })).status).to.equal(200);
      await expect429(await submit(key.key), 'rate_limited');
      clock.advanceMs(40_000); // the first request's 5 tests leave the window
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(5) })).status).to.equal(200);
      expect((await counters(t.db, accountId)).accountUsage).to.equal(35);
    });

    it('more tests than the minute holds can never pass: 400 too_many_tests, nothing billed', async () => {
      clock.set('2026-05-11T12:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { perMinute: 5, sandboxSecondsPerRequest: 10_000 } });
      const res = await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(6) });
      expect(res.status).to.equal(400);
      const err = await errorOf(res);
      expect(err.code).to.equal('too_many_tests');
      expect(err.message).to.match(/at most 5 tests per request: each test counts toward the 5 submissions per minute; got 6/);
      expect((await counters(t.db, accountId)).accountUsage).to.equal(0);
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(5) })).status).to.equal(200);
    });
  });

  describe('sandbox time per request', () => {
    const tests = (n: number) => Array.from({ length: n }, (_, i) => ({ input: String(i) }));

    it(`the Free plan's ${FREE_PLAN.sandboxSecondsPerRequest} s holds its ${FREE_PLAN.testsPerRequest} tests per request, compiled or not`, async () => {
      clock.set('2026-05-12T09:00:00Z');
      // Every test the plan allows is usable: the sandbox time never refuses them first.
      expect(FREE_PLAN.sandboxSecondsPerRequest * 1000).to.be.at.least(requestSandboxMs({ compiles: true, tests: FREE_PLAN.testsPerRequest }));
      const { accountId, key } = await accountWithKey(t.db);
      expect((await submit(key.key, { code: 'x', compiler: 'python-3.9.7', tests: tests(FREE_PLAN.testsPerRequest) })).status).to.equal(200);
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(FREE_PLAN.testsPerRequest) })).status).to.equal(200);
      expect((await counters(t.db, accountId)).accountUsage).to.equal(2 * FREE_PLAN.testsPerRequest);
    });

    it('compile + tests x 30 s over the figure is 400 too_much_sandbox_time, nothing billed', async () => {
      clock.set('2026-05-12T10:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { sandboxSecondsPerRequest: 120 } });
      // Python has no compile stage: 4 tests are 120 s, 5 are 150 s.
      expect((await submit(key.key, { code: 'x', compiler: 'python-3.9.7', tests: tests(4) })).status).to.equal(200);
      const five = await submit(key.key, { code: 'x', compiler: 'python-3.9.7', tests: tests(5) });
      expect(five.status).to.equal(400);
      const err = await errorOf(five);
      expect(err.code).to.equal('too_much_sandbox_time');
      expect(err.message).to.equal('this request may use up to 150 s of sandbox time (5 tests × 30 s); this plan allows 120 s per request: send fewer tests');
      // C compiles first: compile 30 s + 3 tests fit, a fourth does not.
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(3) })).status).to.equal(200);
      const four = await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: tests(4) });
      expect(four.status).to.equal(400);
      expect((await errorOf(four)).message).to.match(/up to 150 s of sandbox time \(compile 30 s \+ 4 tests × 30 s\); this plan allows 120 s/);
      expect((await counters(t.db, accountId)).accountUsage).to.equal(7);
    });

    it('the per-account figure applies, also to a single run', async () => {
      clock.set('2026-05-12T11:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { sandboxSecondsPerRequest: 45 } });
      expect((await submit(key.key, { code: 'x', compiler: 'python-3.9.7' })).status).to.equal(200);
      const compiled = await submit(key.key, { code: 'x', compiler: 'gcc-4.9' });
      expect(compiled.status).to.equal(400);
      expect((await errorOf(compiled)).message).to.equal('this request may use up to 60 s of sandbox time (compile 30 s + 1 run × 30 s); this plan allows 45 s per request');
      expect((await counters(t.db, accountId)).accountUsage).to.equal(1);
    });

    it("counts a checker program's and an interactor's stages, their compile included, at the run's timeout (the interactor's with its margin)", async () => {
      clock.set('2026-05-12T11:30:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { sandboxSecondsPerRequest: 130 } });
      const judged = (extra: object, n: number, limits?: object) =>
        submit(key.key, { code: 'x', compiler: 'python-3.9.7', tests: tests(n).map((t) => ({ ...t, expected_output: '' })), ...extra, ...(limits ? { limits } : {}) });
      const checker = { checker: { type: 'program', compiler: 'gcc-9', code: 'int main(void){return 0;}', convention: 'testlib' } };
      // A judged Python program is syntax-checked first (a compile stage at 30 s); a C checker:
      // 30 s to build it, then a check at the run's 30 s after each test.
      expect((await judged(checker, 1)).status).to.equal(200);
      const two = await judged(checker, 2);
      expect(two.status).to.equal(400);
      expect(await errorOf(two)).to.deep.equal({
        code: 'too_much_sandbox_time',
        message: 'this request may use up to 180 s of sandbox time (compile 30 s + 2 tests × 30 s + checker compile 30 s + 2 checks × 30 s); this plan allows 130 s per request: send fewer tests',
      });
      // A built-in comparison adds nothing.
      expect((await judged({ checker: { type: 'tokens' } }, 3)).status).to.equal(200);
      // The interactor's stage beside each run: the run's wall time and the margin.
      const interactor = { interactor: { compiler: 'python-3.9.7', code: 'x', convention: 'testlib' } };
      const margin = INTERACTOR_MARGIN_MS / 1000;
      const three = await judged(interactor, 3, { wall_time: 20 });
      expect(three.status).to.equal(400);
      expect((await errorOf(three)).message).to.equal(
        `this request may use up to ${30 + 3 * (20 + 20 + margin)} s of sandbox time (compile 30 s + 3 tests × 20 s + 3 interactor runs × ${20 + margin} s); this plan allows 130 s per request: send fewer tests`,
      );
      expect((await judged(interactor, 2, { wall_time: 20 })).status).to.equal(200);
      expect((await counters(t.db, accountId)).accountUsage).to.equal(6);
    });

    it("counts the stage timeouts a compatible route lowered: Judge0's wall_time_limit, refused as a field error", async () => {
      clock.set('2026-05-12T12:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { sandboxSecondsPerRequest: 10 } });
      const judge0 = (body: object) =>
        fetch(`${api.url}/judge0/submissions`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key.key }, body: JSON.stringify(body) });
      const over = await judge0({ source_code: 'print(1)', language_id: 71 });
      expect(over.status).to.equal(422);
      expect(await over.json()).to.deep.equal({
        wall_time_limit: ['this request may use up to 30 s of sandbox time (1 run × 30 s); this plan allows 10 s per request'],
      });
      expect((await judge0({ source_code: 'print(1)', language_id: 71, wall_time_limit: 2.5 })).status).to.equal(201);
      // The compile stage keeps the service's timeout.
      const c = await judge0({ source_code: 'int main(void){return 0;}', language_id: 50, wall_time_limit: 2.5 });
      expect(c.status).to.equal(422);
      expect(JSON.stringify(await c.json())).to.contain('up to 32.5 s of sandbox time (compile 30 s + 1 run × 2.5 s)');
      expect((await counters(t.db, accountId)).accountUsage).to.equal(1);
    });
  });

  describe('monthly allowance', () => {
    it('is exact at the boundary, counts tests as units, and resets at the start of the next UTC month', async () => {
      clock.set('2026-01-31T23:59:58Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000, monthlyLimit: 5 } });
      expect((await submit(key.key)).status).to.equal(200);
      expect((await submit(key.key)).status).to.equal(200);
      expect((await submit(key.key)).status).to.equal(200);
      // 3 used: three more tests would make 6.
      await expect429(await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: [{ input: '1' }, { input: '2' }, { input: '3' }] }), 'monthly_limit');
      expect((await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: [{ input: '1' }, { input: '2' }] })).status).to.equal(200);
      const before = await counters(t.db, accountId);
      expect(before.accountUsage).to.equal(5);
      expect(await expect429(await submit(key.key), 'monthly_limit')).to.equal(2);
      expect(await counters(t.db, accountId)).to.deep.equal(before);
      const usage = (await (await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } })).json()) as Record<string, unknown>;
      expect(usage).to.include({ month: '2026-01', submissions: 5, remaining: 0, resets_at: '2026-02-01T00:00:00.000Z' });

      clock.set('2026-02-01T00:00:00Z');
      expect((await submit(key.key)).status).to.equal(200);
      const feb = (await (await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } })).json()) as Record<string, unknown>;
      expect(feb).to.include({ month: '2026-02', submissions: 1, remaining: 4, resets_at: '2026-03-01T00:00:00.000Z' });
      const rows = await t.db.selectFrom('account_usage').select(['month', 'submissions']).where('account_id', '=', accountId).orderBy('month').execute();
      expect(rows).to.deep.equal([
        { month: '2026-01', submissions: 5 },
        { month: '2026-02', submissions: 1 },
      ]);
    });
  });

  describe('per-key monthly limit', () => {
    it('stops only that key, and never lets the account exceed its allowance', async () => {
      clock.set('2026-06-01T08:00:00Z');
      const { accountId, key: limited } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000, monthlyLimit: 6 }, keyMonthlyLimit: 2 });
      const free = await createKey(t.db, { accountId, appName: 'no own limit' });
      const generous = await createKey(t.db, { accountId, appName: 'own limit above the account', monthlyLimit: 100 });
      expect((await submit(limited.key)).status).to.equal(200);
      expect((await submit(limited.key)).status).to.equal(200);
      await expect429(await submit(limited.key), 'key_monthly_limit');
      for (let i = 0; i < 3; i++) expect((await submit(free.key)).status).to.equal(200);
      expect((await submit(generous.key)).status).to.equal(200);
      // The account's 6 are used: every key is stopped now, whatever its own limit.
      await expect429(await submit(generous.key), 'monthly_limit');
      await expect429(await submit(free.key), 'monthly_limit');
      const c = await counters(t.db, accountId);
      expect(c).to.deep.equal({ submissions: 6, accountUsage: 6, keyUsage: 6 });
      const usage = (await (await fetch(`${api.url}/api/usage/`, { headers: { Authorization: limited.key } })).json()) as Record<string, unknown>;
      expect(usage.key).to.deep.equal({ submissions: 2, monthly_limit: 2, remaining: 0 });
    });
  });

  describe('refunds', () => {
    it('decrement the account and key counters of the submission month, exactly once', async () => {
      clock.set('2026-07-31T23:00:00Z');
      const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000, monthlyLimit: 2 } });
      const first = await submit(key.key, { code: 'x', compiler: 'gcc-4.9', tests: [{ input: '1' }, { input: '2' }] });
      expect(first.status).to.equal(200);
      await expect429(await submit(key.key), 'monthly_limit');
      const id = first.headers.get('x-submission-id')!;
      clock.set('2026-08-01T01:00:00Z'); // refunded after the month changed: July's counters move
      expect((await submit(key.key)).status).to.equal(200);
      expect(await refundSubmission(t.db, id)).to.equal(true);
      expect(await refundSubmission(t.db, id)).to.equal(false);
      const rows = await t.db.selectFrom('account_usage').select(['month', 'submissions']).where('account_id', '=', accountId).orderBy('month').execute();
      expect(rows).to.deep.equal([
        { month: '2026-07', submissions: 0 },
        { month: '2026-08', submissions: 1 },
      ]);
      const keyRows = await t.db.selectFrom('key_usage').select(['month', 'submissions']).where('key_id', '=', key.id).orderBy('month').execute();
      expect(keyRows).to.deep.equal([
        { month: '2026-07', submissions: 0 },
        { month: '2026-08', submissions: 1 },
      ]);
      const row = await t.db.selectFrom('submissions').select('refunded').where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.refunded).to.equal(true);
    });

    it('give the allowance back inside a transaction of the caller', async () => {
      clock.set('2026-09-10T00:00:00Z');
      const { key } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000, monthlyLimit: 1 }, keyMonthlyLimit: 1 });
      const res = await submit(key.key);
      expect(res.status).to.equal(200);
      await expect429(await submit(key.key), 'monthly_limit');
      await t.db.transaction().execute(async (trx) => {
        await trx.updateTable('submissions').set({ state: 'failed' }).where('id', '=', res.headers.get('x-submission-id')!).execute();
        expect(await refundSubmission(trx, res.headers.get('x-submission-id')!)).to.equal(true);
      });
      expect((await submit(key.key)).status).to.equal(200);
    });
  });
});
