import { expect } from 'chai';
import { refundSubmission } from '../../src/quota/refund.js';
import { accountWithKey, counters, errorOf, fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { createKey } from '../../src/accounts/keys.js';
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
    images = fakeImagesDir(['gcc-4.9']);
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
