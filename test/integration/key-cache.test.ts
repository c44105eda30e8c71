import { expect } from 'chai';
import { createKeyCache, type KeyCache } from '../../src/accounts/key-cache.js';
import { hashKey, revokeKey, setKeyLimit } from '../../src/accounts/keys.js';
import { accountWithKey, counters, errorOf, fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// API keys cached per process: a change of the key's row is notified in its own
// transaction and drops the cached copy; admission re-checks revocation under its lock.

describe('key cache', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let keys: KeyCache;
  const invalidated: string[] = [];
  const clock = new TestClock(new Date('2026-03-15T12:00:00Z'));
  const hello = { code: 'print(1)\n', input: '', compiler: 'python-3.9.7' };

  /** Resolves once the cache has been told that the key with this hash changed. */
  const droppedFor = (hashHex: string) =>
    new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        if (invalidated.includes(hashHex)) {
          clearInterval(timer);
          resolve();
        }
      }, 2);
    });

  before(async () => {
    t = await freshDatabase('key_cache');
    images = fakeImagesDir(['python-3.9.7']);
    // Entries never expire in this suite: only notifications can drop them.
    keys = createKeyCache({ db: t.db, url: t.url, ttlMs: 3_600_000, onInvalidate: (h) => invalidated.push(h) });
    await keys.ready();
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock, keys });
  });
  after(async () => {
    await api?.close();
    await keys?.close();
    images?.remove();
    await t?.drop();
  });

  it('a key revoked while cached answers 401 revoked_key at once, and nothing is stored', async () => {
    const { accountId, key } = await accountWithKey(t.db);
    expect((await postRun(api.url, key.key, hello)).status).to.equal(200);
    expect((await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } })).status).to.equal(200);
    await revokeKey(t.db, key.id);
    // No waiting for the notification: admission checks revocation in its own transaction.
    const revoked = await postRun(api.url, key.key, hello);
    expect(revoked.status).to.equal(401);
    expect(revoked.headers.get('www-authenticate')).to.match(/^Bearer/);
    expect(await errorOf(revoked)).to.include({ code: 'revoked_key' });
    expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 1, accountUsage: 1, keyUsage: 1 });
    // Routes that store nothing learn of it from the notification.
    await droppedFor(hashKey(key.key).toString('hex'));
    const usage = await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } });
    expect(usage.status).to.equal(401);
    expect(await errorOf(usage)).to.include({ code: 'revoked_key' });
  });

  it('a new key limit replaces the cached one once notified', async () => {
    const { key } = await accountWithKey(t.db, { keyMonthlyLimit: 5 });
    const hash = hashKey(key.key);
    expect((await keys.find(hash))?.keyMonthlyLimit).to.equal(5);
    await setKeyLimit(t.db, key.id, 7);
    await droppedFor(hash.toString('hex'));
    expect((await keys.find(hash))?.keyMonthlyLimit).to.equal(7);
  });

  it("a key stored after a lookup missed it is found once notified, not after the cached 'no such key' expires", async () => {
    const { accountId } = await accountWithKey(t.db);
    const future = 'rbx_created-after-a-miss';
    const hash = hashKey(future);
    expect(await keys.find(hash)).to.equal(undefined);
    await t.db
      .insertInto('api_keys')
      .values({ account_id: accountId, key_hash: hash, key_prefix: future.slice(0, 12), app_name: 'late', kind: 'api', signing_secret: 'rbxs_x' })
      .execute();
    await droppedFor(hash.toString('hex'));
    expect((await keys.find(hash))?.accountId).to.equal(accountId);
  });

  it('serves nothing from the cache while it does not receive notifications', async () => {
    const { key } = await accountWithKey(t.db);
    const alone = createKeyCache({ db: t.db, url: t.url, ttlMs: 3_600_000 });
    await alone.ready();
    const hash = hashKey(key.key);
    expect((await alone.find(hash))?.revoked).to.equal(false);
    await alone.close();
    await revokeKey(t.db, key.id);
    expect((await alone.find(hash))?.revoked).to.equal(true);
  });
});
