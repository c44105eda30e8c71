import { expect } from 'chai';
import { sql } from 'kysely';
import { upsertPlan } from '../../src/accounts/plans.js';
import { PROBLEM_LIMITS } from '../../src/limits.js';
import { sweepProblems } from '../../src/problems/sweep.js';
import { accountWithKey, errorOf, fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { makeZip } from '../helpers/zip.js';

// Stored problems over HTTP: JSON and zip packages in, versions, the account's storage
// counted once per distinct file, another account's problem a 404, every refusal a 400
// that stores nothing, and the sweep that frees what no run needs any more.

interface Problem {
  id: string;
  name: string;
  version: number;
  test_count: number;
  data_bytes: number;
  checker: { type: string; compiler?: string; convention?: string; files?: string[] };
  interactor: unknown;
  limits: Record<string, number>;
  tests: { name: string; sample: boolean; weight: number; input_bytes: number; expected_output_bytes: number; input?: string; expected_output?: string }[];
}

describe('problems API', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;

  before(async () => {
    t = await freshDatabase('problems_api');
    images = fakeImagesDir(['gcc-9', 'g++-9', 'g++-4.9', 'python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  const send = (method: string, path: string, key: string, body?: unknown, type = 'application/json') =>
    fetch(`${api.url}${path}`, {
      method,
      headers: { Authorization: key, ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: Buffer.isBuffer(body) ? new Uint8Array(body) : typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
  const rows = async () => {
    const { rows } = await sql<{ problems: number; versions: number; tests: number; data: number }>`
      SELECT (SELECT count(*) FROM problems)::int AS problems, (SELECT count(*) FROM problem_versions)::int AS versions,
             (SELECT count(*) FROM problem_tests)::int AS tests, (SELECT count(*) FROM test_data)::int AS data`.execute(t.db);
    return rows[0]!;
  };

  const echo = {
    name: 'Echo',
    tests: [
      { input: 'hi\n', expected_output: 'hi\n', sample: true },
      { name: 'long', input: 'x'.repeat(1000), expected_output: 'x'.repeat(1000), weight: 2 },
    ],
    checker: { type: 'tokens' },
    limits: { time: 2, memory: 65536 },
  };

  const kattisZip = () =>
    makeZip([
      { name: 'sum/problem.yaml', content: 'name: Sum\nvalidation: custom\nlimits:\n  memory: 128\n' },
      { name: 'sum/data/sample/1.in', content: '1 2\n' },
      { name: 'sum/data/sample/1.ans', content: '3\n' },
      { name: 'sum/data/secret/1.in', content: '20 22\n' },
      { name: 'sum/data/secret/1.ans', content: '42\n' },
      { name: 'sum/output_validators/sum/check.cpp', content: '#include "testlib.h"\nint main() { return 0; }\n' },
      { name: 'sum/output_validators/sum/testlib.h', content: '/* the problem setter\'s copy */\n' },
    ]);

  it('POST JSON: 201 with its id and Location; GET shows samples whole and other tests by size', async () => {
    const { key } = await accountWithKey(t.db);
    const res = await send('POST', '/api/v2/problems/', key.key, echo);
    expect(res.status).to.equal(201);
    const created = (await res.json()) as Problem;
    expect(res.headers.get('location')).to.equal(`/api/v2/problems/${created.id}`);
    expect(created).to.deep.include({ name: 'Echo', version: 1, test_count: 2, data_bytes: 3 + 1000, checker: { type: 'tokens' }, interactor: null, limits: { time: 2, memory: 65536 } });
    expect(created.tests).to.deep.equal([
      { name: '1', sample: true, weight: 1, input_bytes: 3, expected_output_bytes: 3, input: 'hi\n', expected_output: 'hi\n' },
      { name: 'long', sample: false, weight: 2, input_bytes: 1000, expected_output_bytes: 1000 },
    ]);
    const got = (await (await send('GET', `/api/v2/problems/${created.id}`, key.key)).json()) as Problem;
    expect(got).to.deep.equal(created);
  });

  it('POST a Kattis-layout zip: samples, secret tests, the testlib checker with its files', async () => {
    const { key } = await accountWithKey(t.db);
    const res = await send('POST', '/api/v2/problems', key.key, kattisZip(), 'application/zip');
    expect(res.status, await res.clone().text()).to.equal(201);
    const p = (await res.json()) as Problem;
    expect(p).to.deep.include({ name: 'Sum', test_count: 2, limits: { memory: 128 * 1024 } });
    expect(p.checker).to.deep.equal({ type: 'program', compiler: 'g++-9', convention: 'testlib', files: ['check.cpp', 'testlib.h'] });
    expect(p.tests.map((x) => [x.name, x.sample, x.input ?? null])).to.deep.equal([['sample/1', true, '1 2\n'], ['secret/1', false, null]]);
  });

  it("the list: newest first, with the account's storage, each distinct file counted once", async () => {
    const { key } = await accountWithKey(t.db);
    const shared = 'y'.repeat(5000);
    const one = { tests: [{ input: shared, expected_output: shared }] };
    const a = (await (await send('POST', '/api/v2/problems', key.key, { ...one, name: 'A' })).json()) as Problem;
    const b = (await (await send('POST', '/api/v2/problems', key.key, { ...one, name: 'B' })).json()) as Problem;
    expect(a.data_bytes).to.equal(5000);
    const list = (await (await send('GET', '/api/v2/problems', key.key)).json()) as { problems: Problem[]; storage: { used_bytes: number; limit_bytes: number } };
    expect(list.problems.map((p) => p.name)).to.deep.equal(['B', 'A']);
    expect(list.problems[0]).to.have.keys(['id', 'name', 'version', 'feedback', 'public', 'test_count', 'data_bytes', 'created_at', 'updated_at']);
    expect(list.storage).to.deep.equal({ used_bytes: 5000, limit_bytes: 64 * 1024 * 1024 });
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM test_data WHERE size = 5000`.execute(t.db);
    expect(rows[0]!.n).to.equal(1);
    expect(b.id).to.not.equal(a.id);
  });

  it('PUT makes the next version; the replaced version and the data only it held go', async () => {
    const { key } = await accountWithKey(t.db);
    const first = (await (await send('POST', '/api/v2/problems', key.key, { tests: [{ input: 'only-in-v1', expected_output: 'v1' }] })).json()) as Problem;
    const res = await send('PUT', `/api/v2/problems/${first.id}`, key.key, { name: 'Renamed', tests: [{ input: 'v2 input', expected_output: 'v2' }] });
    expect(res.status).to.equal(200);
    const second = (await res.json()) as Problem;
    expect(second).to.deep.include({ id: first.id, name: 'Renamed', version: 2, test_count: 1 });
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM test_data WHERE content = ${Buffer.from('only-in-v1')}`.execute(t.db);
    expect(rows[0]!.n).to.equal(0);
    const versions = await t.db.selectFrom('problem_versions').select('version').where('problem_id', '=', first.id).execute();
    expect(versions.map((v) => v.version)).to.deep.equal([2]);
  });

  it('a version a queued run names stays until the run has ended; then the sweep frees it', async () => {
    const { accountId, key } = await accountWithKey(t.db);
    const p = (await (await send('POST', '/api/v2/problems', key.key, { tests: [{ input: 'pinned input', expected_output: 'x' }] })).json()) as Problem;
    const sub = await t.db
      .insertInto('submissions')
      .values({ account_id: accountId, compiler: 'gcc-9', code: '', month: '2026-01', run_options: JSON.stringify({ judge: { problem: { id: p.id, version: 1 } } }) })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await send('PUT', `/api/v2/problems/${p.id}`, key.key, { tests: [{ input: 'new input', expected_output: 'x' }] })).status).to.equal(200);
    const kept = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM test_data WHERE content = ${Buffer.from('pinned input')}`.execute(t.db)).rows[0]!.n;
    expect(await kept()).to.equal(1);
    await t.db.updateTable('submissions').set({ state: 'finished' }).where('id', '=', sub.id).execute();
    await sweepProblems(t.db);
    expect(await kept()).to.equal(0);
  });

  it("another account's problem is a 404 on GET, PUT and DELETE, and not in its list", async () => {
    const owner = await accountWithKey(t.db);
    const other = await accountWithKey(t.db);
    const p = (await (await send('POST', '/api/v2/problems', owner.key.key, echo)).json()) as Problem;
    for (const [method, body] of [['GET'], ['PUT', echo], ['DELETE']] as const) {
      const res = await send(method, `/api/v2/problems/${p.id}`, other.key.key, body);
      expect(res.status, method).to.equal(404);
      expect((await errorOf(res)).message).to.equal(`no problem ${p.id}`);
    }
    expect(((await (await send('GET', '/api/v2/problems', other.key.key)).json()) as { problems: unknown[] }).problems).to.deep.equal([]);
    expect((await send('GET', '/api/v2/problems/not-a-uuid', owner.key.key)).status).to.equal(404);
    expect((await send('GET', `/api/v2/problems/${p.id}`, owner.key.key)).status).to.equal(200);
  });

  it('DELETE: 204, then a 404; its data goes', async () => {
    const { key } = await accountWithKey(t.db);
    const p = (await (await send('POST', '/api/v2/problems', key.key, { tests: [{ input: 'to be deleted', expected_output: 'x' }] })).json()) as Problem;
    expect((await send('DELETE', `/api/v2/problems/${p.id}`, key.key)).status).to.equal(204);
    expect((await send('GET', `/api/v2/problems/${p.id}`, key.key)).status).to.equal(404);
    expect((await send('DELETE', `/api/v2/problems/${p.id}`, key.key)).status).to.equal(404);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM problems WHERE id = ${p.id}`.execute(t.db);
    expect(rows[0]!.n).to.equal(0);
  });

  it("a problem with more tests than the account's plan judges per request is refused at upload, naming the plan's figure; stored once the plan allows them", async () => {
    const { accountId, key } = await accountWithKey(t.db, { limits: { testsPerRequest: 3 } });
    const four = { name: 'Four', tests: Array.from({ length: 4 }, (_, i) => ({ input: `${i}\n`, expected_output: `${i}\n` })) };
    const before = await rows();
    const res = await send('POST', '/api/v2/problems/', key.key, four);
    const err = await errorOf(res);
    expect([res.status, err.code]).to.deep.equal([400, 'too_many_tests']);
    // The account has a figure of its own: the operator's command that raises it names the account.
    expect(err.message).to.equal(
      "the problem has 4 tests and the account's plan judges at most 3 tests per request: every submission would be refused; split it or ask for more tests per request " +
        `(the operator raises it with runbox-admin account set-limits --account ${accountId} --tests-per-request 4)`,
    );
    expect(await rows()).to.deep.equal(before);
    await sql`UPDATE accounts SET tests_per_request = 4 WHERE id = ${accountId}`.execute(t.db);
    const stored = await send('POST', '/api/v2/problems/', key.key, four);
    expect(stored.status).to.equal(201);
    expect(((await stored.json()) as Problem).test_count).to.equal(4);

    // On a plan's figure alone: the plan's command, and the account's.
    await upsertPlan(t.db, 'three-tests', { testsPerRequest: 3 });
    const onPlan = await accountWithKey(t.db);
    await sql`UPDATE accounts SET plan = 'three-tests' WHERE id = ${onPlan.accountId}`.execute(t.db);
    const refused = await errorOf(await send('POST', '/api/v2/problems/', onPlan.key.key, four));
    expect(refused.code).to.equal('too_many_tests');
    expect(refused.message).to.match(/at most 3 tests per request/);
    expect(refused.message).to.include(
      `(the operator raises it with runbox-admin plan upsert --name three-tests --tests-per-request 4 (every account on the plan) or runbox-admin account set-limits --account ${onPlan.accountId} --tests-per-request 4 (this account))`,
    );
  });

  describe("the account's storage allowance, checked before and while storing", () => {
    const MiB = 1024 * 1024;

    it('a package whose declared sizes cannot fit is refused before any entry is inflated', async () => {
      const { key } = await accountWithKey(t.db);
      // 20 tests of two 16 MiB files each, as the zip's directory declares them; the
      // entries hold a few bytes, so reading any of them would fail as a lying zip.
      const entries = Array.from({ length: 20 }, (_, i) => [
        { name: `tests/${i}.in`, content: `in ${i}`, declaredSize: 16 * MiB },
        { name: `tests/${i}.out`, content: `out ${i}`, declaredSize: 16 * MiB },
      ]).flat();
      const before = await rows();
      const res = await send('POST', '/api/v2/problems', key.key, makeZip(entries), 'application/zip');
      expect(res.status).to.equal(400);
      const err = await errorOf(res);
      expect(err.code, err.message).to.equal('problem_storage_full');
      expect(err.message).to.equal("the account's stored problems would hold at least 640.0 MiB of test data with this one; its plan allows 64.0 MiB (each distinct file counted once): delete a problem or send less data");
      expect(await rows()).to.deep.equal(before);
    });

    it('files the account keeps already cost nothing; the first new file past the allowance stops the write, before the next is read', async () => {
      const { key } = await accountWithKey(t.db, { limits: { problemStorageBytes: 10_000 } });
      const a = (await (await send('POST', '/api/v2/problems', key.key, { tests: [{ input: 'a'.repeat(3000), expected_output: 'b'.repeat(3000) }] })).json()) as Problem;
      // Replacing it with the same files: they are not counted twice.
      expect((await send('PUT', `/api/v2/problems/${a.id}`, key.key, { tests: [{ input: 'a'.repeat(3000), expected_output: 'b'.repeat(3000) }] })).status).to.equal(200);
      // Its sizes could all be the account's files but one: the declared sizes fit. Stored
      // in turn, tests/1.out goes past the allowance; tests/2.in, a lie no read survives,
      // is never read.
      const before = await rows();
      const zip = makeZip([
        { name: 'tests/1.in', content: 'c'.repeat(3000) },
        { name: 'tests/1.out', content: 'd'.repeat(3000) },
        { name: 'tests/2.in', content: 'e', declaredSize: 3000 },
        { name: 'tests/2.out', content: '' },
      ]);
      const res = await send('POST', '/api/v2/problems', key.key, zip, 'application/zip');
      const err = await errorOf(res);
      expect([res.status, err.code], err.message).to.deep.equal([400, 'problem_storage_full']);
      expect(err.message).to.match(/^the account's stored problems would hold at least 12000 bytes of test data with this one; its plan allows 10000 bytes/);
      expect(await rows()).to.deep.equal(before);
    });
  });

  it(`problem writes: at most ${PROBLEM_LIMITS.writesPerMinute} a minute per account (create, replace, delete); then 429 rate_limited with Retry-After, nothing stored`, async () => {
    const { key } = await accountWithKey(t.db);
    const other = await accountWithKey(t.db);
    const small = { tests: [{ input: '1', expected_output: '1' }] };
    const first = (await (await send('POST', '/api/v2/problems', key.key, small)).json()) as Problem;
    expect((await send('PUT', `/api/v2/problems/${first.id}`, key.key, small)).status).to.equal(200);
    expect((await send('DELETE', `/api/v2/problems/${first.id}`, key.key)).status).to.equal(204);
    for (let i = 3; i < PROBLEM_LIMITS.writesPerMinute; i++) expect((await send('POST', '/api/v2/problems', key.key, small)).status).to.equal(201);
    const before = await rows();
    for (const [method, path, body] of [['POST', '/api/v2/problems', small], ['PUT', `/api/v2/problems/${first.id}`, small], ['DELETE', `/api/v2/problems/${first.id}`, undefined]] as const) {
      const res = await send(method, path, key.key, body);
      expect(res.status, method).to.equal(429);
      const retryAfter = Number(res.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 60);
      expect(await errorOf(res)).to.deep.equal({ code: 'rate_limited', message: `at most ${PROBLEM_LIMITS.writesPerMinute} problem writes (create, replace, delete) a minute per account; try again in ${retryAfter} s` });
    }
    // A zip is refused before its body is read, as JSON is.
    expect((await send('POST', '/api/v2/problems', key.key, kattisZip(), 'application/zip')).status).to.equal(429);
    expect(await rows()).to.deep.equal(before);
    // Reads are not writes; another account is not limited by this one.
    expect((await send('GET', '/api/v2/problems', key.key)).status).to.equal(200);
    expect((await send('POST', '/api/v2/problems', other.key.key, small)).status).to.equal(201);
  });

  describe('refused with a 400 that says why, nothing stored', () => {
    const refused = async (body: unknown, code: string, message: RegExp | string, type = 'application/zip', limits = {}) => {
      const { key } = await accountWithKey(t.db, { limits });
      const before = await rows();
      const res = await send('POST', '/api/v2/problems', key.key, body, type);
      expect(res.status).to.equal(400);
      const err = await errorOf(res);
      expect(err.code).to.equal(code);
      if (typeof message === 'string') expect(err.message).to.equal(message);
      else expect(err.message).to.match(message);
      expect(await rows()).to.deep.equal(before);
    };

    it('a test without its answer', () =>
      refused(makeZip([{ name: 'data/secret/1.in', content: '1' }]), 'invalid_package', 'data/secret/1.in has no data/secret/1.ans beside it'));
    it('a file over 16 MiB', () =>
      refused(makeZip([{ name: 'tests/1.in', content: Buffer.alloc(16 * 1024 * 1024 + 1) }, { name: 'tests/1.out', content: '' }]), 'test_file_too_large', /is 16777217 bytes; a file may have at most 16777216 bytes/));
    it('a JSON test over 16 MiB', () =>
      refused({ tests: [{ input: 'z'.repeat(16 * 1024 * 1024 + 1), expected_output: '' }] }, 'invalid_request', /^tests.0.input must be at most 16777216 UTF-8 encoded bytes/, 'application/json'));
    it('path traversal', () =>
      refused(makeZip([{ name: '../../outside', content: 'x' }, { name: 'tests/1.in', content: '1' }, { name: 'tests/1.out', content: '1' }]), 'invalid_package', /points outside the package/));
    it('a zip bomb', () =>
      refused(makeZip([{ name: 'tests/1.in', content: Buffer.alloc(40 * 1024 * 1024), declaredSize: 100 }, { name: 'tests/1.out', content: '1' }]), 'invalid_package', /a damaged or hostile zip$/));
    it("past the account's storage (the data stored so far is rolled back)", () =>
      refused({ tests: [{ input: 'a'.repeat(600), expected_output: 'b'.repeat(600) }] }, 'problem_storage_full', /would hold 1200 bytes of test data with this one; its plan allows 1000 bytes \(each distinct file counted once\)/, 'application/json', { problemStorageBytes: 1000 }));
    it('a checker in a compiler that is not installed', () =>
      refused({ tests: [{ input: '', expected_output: '' }], checker: { type: 'program', compiler: 'openjdk-11', code: 'x', convention: 'kattis' } }, 'compiler_unavailable', /compiler openjdk-11 \(of the checker or interactor\) is not installed/, 'application/json'));
    it('a body neither JSON nor zip', () =>
      refused('tests', 'unsupported_content_type', 'Content-Type must be application/json or application/zip, not text/plain', 'text/plain'));
  });
});
