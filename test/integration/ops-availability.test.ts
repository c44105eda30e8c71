import { expect } from 'chai';
import { sql } from 'kysely';
import { heartbeat } from '../../src/queue/heartbeat.js';
import { accountWithKey, errorOf, fakeImagesDir, postRun, startTestApi, testConfig, TestClock, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// Multi-host availability: an API host without images offers what its live runners
// publish; with no live runner it falls back to its own images directory.

describe('compiler availability across hosts', function () {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;

  before(async () => {
    t = await freshDatabase('ops_availability');
    images = fakeImagesDir(['python-3.9.7']); // this "API host" has python only
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir, { RUNBOX_LEASE_SECONDS: '30' }), clock: new TestClock() });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  const offered = async () =>
    ((await (await fetch(`${api.url}/api/compilers/`)).json()) as { id: string; available: boolean; version: string | null }[])
      .filter((c) => c.available)
      .map((c) => `${c.id}@${c.version}`)
      .sort();
  const cacheExpiry = () => new Promise((r) => setTimeout(r, 1100));

  it('no runner has published: the local images directory', async () => {
    expect(await offered()).to.deep.equal(['python-3.9.7@3.9.2']);
  });

  it('live runners publish with their heart-beat; the API offers the union of theirs, not its own', async () => {
    await heartbeat(t.db, { id: 'runner-a', hostname: 'a', slots: 2, launcher: 'bwrap', compilers: { 'gcc-4.9': '4.9.4' } }, 30);
    await heartbeat(t.db, { id: 'runner-b', hostname: 'b', slots: 2, launcher: 'bwrap', compilers: { 'gcc-4.9': '4.9.4', 'ruby-3.0.2': '3.0.2' } }, 30);
    const row = await t.db.selectFrom('runners').select('compilers').where('id', '=', 'runner-b').executeTakeFirstOrThrow();
    expect(row.compilers).to.deep.equal({ 'gcc-4.9': '4.9.4', 'ruby-3.0.2': '3.0.2' });
    // A heart-beat without the list keeps the last one published.
    await heartbeat(t.db, { id: 'runner-b', hostname: 'b', slots: 2, launcher: 'bwrap' }, 30);
    expect(await offered()).to.deep.equal(['gcc-4.9@4.9.4', 'ruby-3.0.2@3.0.2']);

    await cacheExpiry();
    const { key } = await accountWithKey(t.db);
    expect((await postRun(api.url, key.key, { code: 'int main(){}', compiler: 'gcc-4.9' })).status).to.equal(200);
    const res = await postRun(api.url, key.key, { code: 'print(1)', compiler: 'python-3.9.7' });
    expect(res.status).to.equal(400);
    expect((await errorOf(res)).code).to.equal('compiler_unavailable');
  });

  it("lists each id's libraries as the runner that serves it published them, beside the column's id → version pairs", async () => {
    const libraries = { 'python-3.13': { numpy: '2.2.4', pandas: '2.2.3' } };
    await heartbeat(t.db, { id: 'runner-c', hostname: 'c', slots: 2, launcher: 'bwrap', compilers: { 'python-3.13': '3.13.5', 'gcc-4.9': '4.9.4' }, libraries }, 30);
    const row = await t.db.selectFrom('runners').select('compilers').where('id', '=', 'runner-c').executeTakeFirstOrThrow();
    // An API host of an earlier release reads ids only, and finds them as before.
    expect(row.compilers).to.deep.equal({ 'python-3.13': '3.13.5', 'gcc-4.9': '4.9.4', '@libraries': libraries });
    const list = (await (await fetch(`${api.url}/api/compilers/`)).json()) as { id: string; available: boolean; libraries: Record<string, string> }[];
    expect(list.find((c) => c.id === 'python-3.13')).to.deep.include({ available: true, libraries: { numpy: '2.2.4', pandas: '2.2.3' } });
    expect(list.find((c) => c.id === 'gcc-4.9')).to.deep.include({ available: true, libraries: {} });
    expect(list.find((c) => c.id === 'r-4.2')).to.deep.include({ available: false, libraries: {} });
    await sql`UPDATE runners SET stopped_at = now() WHERE id = 'runner-c'`.execute(t.db);
  });

  it('a runner that stopped or went silent no longer counts; with none live, the local directory again', async () => {
    await sql`UPDATE runners SET stopped_at = now() WHERE id = 'runner-b'`.execute(t.db);
    expect(await offered()).to.deep.equal(['gcc-4.9@4.9.4']);
    await sql`UPDATE runners SET last_seen = now() - interval '31 seconds' WHERE id = 'runner-a'`.execute(t.db);
    expect(await offered()).to.deep.equal(['python-3.9.7@3.9.2']);
    await cacheExpiry();
    const { key } = await accountWithKey(t.db);
    expect((await postRun(api.url, key.key, { code: 'int main(){}', compiler: 'gcc-4.9' })).status).to.equal(400);
  });
});
