import { once } from 'node:events';
import { expect } from 'chai';
import { sql } from 'kysely';
import { PROBLEM_LIMITS } from '../../src/limits.js';
import { createSession, SESSION_COOKIE } from '../../src/portal/sessions.js';
import { accountWithKey, errorOf, fakeImagesDir, type FakeImages } from '../helpers/api.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Client } from '../helpers/portal-client.js';
import { makeZip } from '../helpers/zip.js';

// A small problem package must not take the API process down. A problem.yaml of 200,000
// `[` and as many `]` (a 741-byte zip) once made the YAML parser abort the whole process
// (API, runner and sender with it); a package's YAML is now bounded in size and nesting
// before it is parsed. The API runs as its own process here, so a crash shows as that
// process gone, and /api/health is asked between uploads.

const TESTS = [
  { name: 'tests/1.in', content: '1\n' },
  { name: 'tests/1.out', content: '1\n' },
];
/** The package that crashed the process: a 400 KB problem.yaml that deflates to a few hundred bytes. */
const crashing = makeZip([{ name: 'problem.yaml', content: `name: ${'['.repeat(200_000)}${']'.repeat(200_000)}` }, ...TESTS]);
/** Within the size bound, nested as deep as it allows. */
const deepWithinSize = makeZip([{ name: 'problem.yaml', content: `name: ${'['.repeat(PROBLEM_LIMITS.metadataFileMaxBytes - 100)}` }, ...TESTS]);

describe('problem packages and the API process', function () {
  let t: TestDatabase;
  let images: FakeImages;
  let api: ApiProcess;
  let apiExited: Promise<string>;

  before(async () => {
    t = await freshDatabase('problem_package_bounds');
    images = fakeImagesDir(['python-3.9.7']);
    api = await spawnApiProcess({ RUNBOX_DATABASE_URL: t.url, RUNBOX_IMAGES_DIR: images.dir, RUNBOX_LOG_LEVEL: 'silent' });
    apiExited = once(api.child, 'exit').then(([code, signal]) => `the API process exited (${String(code ?? signal)})`);
  });
  after(async () => {
    await api?.stop();
    images?.remove();
    await t?.drop();
  });

  /** The answer to `request`, or a failure naming the exit if the API process dies meanwhile. */
  async function answer<T>(request: Promise<T>): Promise<T> {
    const got = await Promise.race([request, apiExited.then((why) => ({ exited: why }))]);
    if (got && typeof got === 'object' && 'exited' in got) throw new Error(String(got.exited));
    return got as T;
  }
  async function healthy(): Promise<void> {
    const res = await answer(fetch(`${api.url}/api/health`, { signal: AbortSignal.timeout(10_000) }));
    expect(res.status).to.equal(200);
    expect(api.child.exitCode).to.equal(null);
  }
  const problemRows = async () => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM problems`.execute(t.db)).rows[0]!.n;

  it('the crashing package is small', () => {
    expect(crashing.length).to.be.lessThan(1000);
  });

  it('through the API: each upload answered 400 naming problem.yaml and its bound; the process answers /api/health throughout', async () => {
    const { key } = await accountWithKey(t.db);
    for (const [zip, message] of [
      [crashing, `problem.yaml is 400006 bytes; the package's problem.yaml may have at most ${PROBLEM_LIMITS.metadataFileMaxBytes}`],
      [deepWithinSize, new RegExp(`^problem.yaml is nested \\d+ levels deep; a package's YAML may nest at most ${PROBLEM_LIMITS.yamlMaxDepth} `)],
    ] as const) {
      for (let i = 0; i < 4; i++) {
        const res = await answer(fetch(`${api.url}/api/v2/problems/`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) }));
        expect(res.status).to.equal(400);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        const err = await errorOf(res);
        expect(err.code).to.equal('invalid_package');
        if (typeof message === 'string') expect(err.message).to.equal(message);
        else expect(err.message).to.match(message);
        await healthy();
      }
    }
    expect(await problemRows()).to.equal(0);
  });

  it("through the portal's upload: each refused with why; the process answers /api/health throughout", async () => {
    const { accountId } = await accountWithKey(t.db);
    const c = new Client(api.url);
    c.cookies.set(SESSION_COOKIE, (await createSession(t.db, accountId)).id);
    for (const zip of [crashing, deepWithinSize, crashing, deepWithinSize]) {
      const form = new FormData();
      form.append('_csrf', await answer(c.token('/problems')));
      form.append('package', new Blob([new Uint8Array(zip)], { type: 'application/zip' }), 'problem.zip');
      const { res, body } = await answer(c.request('/problems', { method: 'POST', body: form }));
      expect(res.status).to.equal(400);
      expect(body).to.match(/The package was not stored: problem\.yaml is (400006 bytes|nested \d+ levels deep)/);
      await healthy();
    }
    expect(await problemRows()).to.equal(0);
  });

  it('a package within the bounds is still stored', async () => {
    const { key } = await accountWithKey(t.db);
    const zip = makeZip([{ name: 'problem.yaml', content: 'name: Fine\nkeywords: ["[", {a: [b]}]\nlimits:\n  time_limit: 2\n' }, ...TESTS]);
    const res = await answer(fetch(`${api.url}/api/v2/problems/`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) }));
    expect(res.status, await res.clone().text()).to.equal(201);
    expect(await res.json()).to.deep.include({ name: 'Fine', limits: { time: 2 } });
  });
});
