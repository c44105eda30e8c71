import { expect } from 'chai';
import { systemClock } from '../../src/util/clock.js';
import { accountWithKey, counters, fakeImagesDir, postRun, startTestApi, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// Limits hold exactly when many requests of one account arrive at once, in one API
// process and across two, with Postgres as the only shared state. Both processes read
// the system clock here, as production hosts do.

describe('quota concurrency', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let second: ApiProcess;
  const run = { code: 'x', input: '', compiler: 'gcc-4.9' };

  before(async () => {
    t = await freshDatabase('quota_concurrency');
    images = fakeImagesDir(['gcc-4.9']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: systemClock });
    second = await spawnApiProcess({ RUNBOX_DATABASE_URL: t.url, RUNBOX_IMAGES_DIR: images.dir });
  });
  after(async () => {
    await second?.stop();
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  async function burst(urls: string[], key: string, n: number): Promise<{ ok: number; refused: Record<string, number> }> {
    const answers = await Promise.all(Array.from({ length: n }, (_, i) => postRun(urls[i % urls.length]!, key, run)));
    let ok = 0;
    const refused: Record<string, number> = {};
    for (const res of answers) {
      if (res.status === 200) {
        ok++;
        await res.text();
      } else {
        const body = (await res.json()) as { error: { code: string } };
        const label = `${res.status} ${body.error.code}`;
        refused[label] = (refused[label] ?? 0) + 1;
      }
    }
    return { ok, refused };
  }

  it('50 concurrent submissions against a pending limit of 8 admit exactly 8', async () => {
    const { accountId, key } = await accountWithKey(t.db);
    const result = await burst([api.url], key.key, 50);
    expect(result).to.deep.equal({ ok: 8, refused: { '429 too_many_pending': 42 } });
    expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 8, accountUsage: 8, keyUsage: 8 });
  });

  it('the same across two API processes', async () => {
    const { accountId, key } = await accountWithKey(t.db);
    const result = await burst([api.url, second.url], key.key, 50);
    expect(result).to.deep.equal({ ok: 8, refused: { '429 too_many_pending': 42 } });
    expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 8, accountUsage: 8, keyUsage: 8 });
  });

  it('the monthly allowance and a key limit hold exactly across two processes', async () => {
    const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000, monthlyLimit: 13 } });
    const result = await burst([api.url, second.url], key.key, 40);
    expect(result).to.deep.equal({ ok: 13, refused: { '429 monthly_limit': 27 } });
    expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 13, accountUsage: 13, keyUsage: 13 });

    const limited = await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000 }, keyMonthlyLimit: 5 });
    const byKey = await burst([api.url, second.url], limited.key.key, 30);
    expect(byKey).to.deep.equal({ ok: 5, refused: { '429 key_monthly_limit': 25 } });
  });

  it('the per-minute rate holds exactly across two processes', async () => {
    const { accountId, key } = await accountWithKey(t.db, { limits: { pending: 1000 } });
    const result = await burst([api.url, second.url], key.key, 45);
    expect(result).to.deep.equal({ ok: 30, refused: { '429 rate_limited': 15 } });
    expect((await counters(t.db, accountId)).accountUsage).to.equal(30);
  });
});
