import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import pg from 'pg';
import { revokeKey } from '../../src/accounts/keys.js';
import { createApp } from '../../src/api/app.js';
import { setMaintenance } from '../../src/api/maintenance.js';
import { connect } from '../../src/db/connect.js';
import { INTERFACE_IDS } from '../../src/compilers/ids.js';
import { clientConfig } from '../../src/db/url.js';
import { FREE_PLAN, MAX_MONTHLY_LIMIT, REQUEST_LIMITS, RUN_LIMITS, WEBSOCKET_RUNS_PER_SECOND } from '../../src/limits.js';
import { accountWithKey, counters, errorOf, fakeImagesDir, postRun, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { databaseUrl, freshDatabase, type TestDatabase } from '../helpers/db.js';

// The public contract (endpoints, authentication, errors and limits) over real HTTP and a real database.

describe('api contract', () => {
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  const clock = new TestClock(new Date('2026-03-15T12:00:00Z'));
  const hello = { code: 'print(1)\n', input: '', compiler: 'python-3.9.7' };

  before(async () => {
    t = await freshDatabase('api_contract');
    images = fakeImagesDir(['python-3.9.7', 'gcc-4.9']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock });
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  describe('POST /api/v2/run-code/', () => {
    it('answers Ok, stores a queued job for the month and notifies runbox_jobs in the same transaction', async () => {
      const { accountId, key } = await accountWithKey(t.db);
      const listener = new pg.Client(clientConfig(t.url));
      await listener.connect();
      try {
        await listener.query('LISTEN runbox_jobs');
        const notified = new Promise<string>((resolve) => listener.on('notification', (n) => resolve(n.payload ?? '')));
        const res = await postRun(api.url, key.key, { ...hello, input: '3\n', extra_params: { task: 7 } });
        expect(res.status).to.equal(200);
        expect(res.headers.get('content-type')).to.match(/^text\/plain/);
        expect(await res.text()).to.equal('Ok');
        const id = res.headers.get('x-submission-id')!;
        expect(id).to.match(/^[0-9a-f-]{36}$/);
        expect(res.headers.get('location')).to.equal(`/api/v2/submissions/${id}`);
        // Runners are woken, not told which job: one notification per committed batch.
        expect(await notified).to.equal('');
        const row = await t.db.selectFrom('submissions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        expect(row).to.include({ account_id: accountId, key_id: key.id, state: 'queued', month: '2026-03', units: 1, compiler: 'python-3.9.7', input: '3\n', mode: 'async' });
        expect(row.extra_params).to.deep.equal({ task: 7 });
        expect(row.created_at.toISOString()).to.equal('2026-03-15T12:00:00.000Z');
        expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 1, accountUsage: 1, keyUsage: 1 });
      } finally {
        await listener.end();
      }
    });

    it('accepts Bearer <key> and the path without its trailing slash', async () => {
      const { key } = await accountWithKey(t.db);
      const res = await fetch(`${api.url}/api/v2/run-code`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key.key}` },
        body: JSON.stringify(hello),
      });
      expect(res.status).to.equal(200);
    });

    it('401 for a missing, wrong or revoked key, with the JSON error body', async () => {
      const { accountId, key } = await accountWithKey(t.db);
      const missing = await postRun(api.url, undefined, hello);
      expect(missing.status).to.equal(401);
      expect(await errorOf(missing)).to.include({ code: 'missing_key' });
      const wrong = await postRun(api.url, key.key + 'x', hello);
      expect(wrong.status).to.equal(401);
      expect(await errorOf(wrong)).to.include({ code: 'invalid_key' });
      await revokeKey(t.db, key.id);
      const revoked = await postRun(api.url, key.key, hello);
      expect(revoked.status).to.equal(401);
      expect(await errorOf(revoked)).to.include({ code: 'revoked_key' });
      const usage = await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } });
      expect(usage.status).to.equal(401);
      expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 0, accountUsage: 0, keyUsage: 0 });
    });

    it('400 compiler_unavailable for a compiler whose image is not installed, not counted', async () => {
      const { accountId, key } = await accountWithKey(t.db);
      const res = await postRun(api.url, key.key, { ...hello, compiler: 'ruby-3.0.2' });
      expect(res.status).to.equal(400);
      const err = await errorOf(res);
      expect(err.code).to.equal('compiler_unavailable');
      expect(err.message).to.contain('ruby-3.0.2');
      expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 0, accountUsage: 0, keyUsage: 0 });
    });

    it('multi-test: units = number of tests; more than tests_per_request is 400 and not counted', async () => {
      const { accountId, key } = await accountWithKey(t.db, { limits: { testsPerRequest: 3 } });
      const ok = await postRun(api.url, key.key, { code: 'x', compiler: 'gcc-4.9', tests: [{ input: '1' }, { input: '2' }, { input: '3' }] });
      expect(ok.status).to.equal(200);
      const row = await t.db.selectFrom('submissions').selectAll().where('id', '=', ok.headers.get('x-submission-id')!).executeTakeFirstOrThrow();
      expect(row.units).to.equal(3);
      expect(row.tests).to.deep.equal([{ input: '1' }, { input: '2' }, { input: '3' }]);
      const over = await postRun(api.url, key.key, { code: 'x', compiler: 'gcc-4.9', tests: [{ input: '1' }, { input: '2' }, { input: '3' }, { input: '4' }] });
      expect(over.status).to.equal(400);
      expect((await errorOf(over)).code).to.equal('too_many_tests');
      const both = await postRun(api.url, key.key, { code: 'x', compiler: 'gcc-4.9', input: '', tests: [{ input: '1' }] });
      expect(both.status).to.equal(400);
      expect(await counters(t.db, accountId)).to.deep.equal({ submissions: 1, accountUsage: 3, keyUsage: 3 });
    });

    it('503 in maintenance mode, on the run endpoint only, until switched off', async () => {
      const { accountId, key } = await accountWithKey(t.db);
      await setMaintenance(t.db, true);
      try {
        const res = await postRun(api.url, key.key, hello);
        expect(res.status).to.equal(503);
        expect(await errorOf(res)).to.include({ code: 'maintenance' });
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
        expect((await fetch(`${api.url}/api/limits/`)).status).to.equal(200);
        expect((await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } })).status).to.equal(200);
      } finally {
        await setMaintenance(t.db, false);
      }
      expect((await postRun(api.url, key.key, hello)).status).to.equal(200);
      expect((await counters(t.db, accountId)).submissions).to.equal(1);
    });
  });

  describe('errors on every route', () => {
    it('404 with a JSON error body for an unknown path', async () => {
      const res = await fetch(`${api.url}/api/v3/nothing`);
      expect(res.status).to.equal(404);
      expect(res.headers.get('content-type')).to.match(/^application\/json/);
      expect(await errorOf(res)).to.include({ code: 'not_found' });
    });

    it('405 with an Allow header for a wrong method', async () => {
      const res = await fetch(`${api.url}/api/v2/run-code/`, { method: 'GET' });
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.contain('POST');
      expect(await errorOf(res)).to.include({ code: 'method_not_allowed' });
      const del = await fetch(`${api.url}/api/limits/`, { method: 'DELETE' });
      expect(del.status).to.equal(405);
      expect(del.headers.get('allow')).to.contain('GET');
    });

    it('406 when Accept admits neither JSON nor plain text; */* and text/* are fine', async () => {
      const res = await fetch(`${api.url}/api/limits/`, { headers: { Accept: 'image/png' } });
      expect(res.status).to.equal(406);
      expect(await errorOf(res)).to.include({ code: 'not_acceptable' });
      const { key } = await accountWithKey(t.db);
      const run = await postRun(api.url, key.key, hello, { Accept: 'application/xml' });
      expect(run.status).to.equal(406);
      expect((await fetch(`${api.url}/api/limits/`, { headers: { Accept: '*/*' } })).status).to.equal(200);
      expect((await postRun(api.url, key.key, hello, { Accept: 'text/*' })).status).to.equal(200);
    });
  });

  it('500 with the JSON error body when the database is unreachable', async () => {
    const { key } = await accountWithKey(t.db);
    const broken = connect(databaseUrl(`runbox_missing_${process.pid}`), { max: 1 });
    const logged: unknown[] = [];
    const app = createApp({ db: broken.db, config: testConfig(t.url, images.dir), clock, log: { error: (obj) => logged.push(obj) } });
    const server = createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/usage/`, { headers: { Authorization: key.key } });
      expect(res.status).to.equal(500);
      expect(await errorOf(res)).to.deep.equal({ code: 'internal_error', message: 'internal server error; try again later' });
      expect(logged).to.have.length(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await broken.close();
    }
  });

  describe('GET /api/usage/', () => {
    it('has exactly the fields of spec 2.3 plus current, with the plan limits and the key counts', async () => {
      const { key } = await accountWithKey(t.db, { keyMonthlyLimit: 50 });
      expect((await postRun(api.url, key.key, hello)).status).to.equal(200);
      expect((await postRun(api.url, key.key, hello)).status).to.equal(200);
      const res = await fetch(`${api.url}/api/usage/`, { headers: { Authorization: key.key } });
      expect(res.status).to.equal(200);
      expect(await res.json()).to.deep.equal({
        month: '2026-03',
        submissions: 2,
        monthly_limit: FREE_PLAN.monthlyLimit,
        remaining: FREE_PLAN.monthlyLimit - 2,
        resets_at: '2026-04-01T00:00:00.000Z',
        submissions_per_minute: FREE_PLAN.perMinute,
        pending_submissions: FREE_PLAN.pending,
        running_submissions: FREE_PLAN.running,
        current: { submissions_last_minute: 2, pending: 2, running: 0 },
        key: { submissions: 2, monthly_limit: 50, remaining: 48 },
      });
    });

    it('key.monthly_limit and key.remaining are null for a key without a limit of its own', async () => {
      const { key } = await accountWithKey(t.db);
      const body = (await (await fetch(`${api.url}/api/usage`, { headers: { Authorization: `Bearer ${key.key}` } })).json()) as {
        key: unknown;
      };
      expect(body.key).to.deep.equal({ submissions: 0, monthly_limit: null, remaining: null });
    });
  });

  describe('GET /api/limits/', () => {
    it('needs no key and lists every published limit from src/limits.ts', async () => {
      const res = await fetch(`${api.url}/api/limits/`);
      expect(res.status).to.equal(200);
      const body = (await res.json()) as Record<string, Record<string, unknown>>;
      expect(body.run).to.include({
        memory_bytes: 512 * 1024 * 1024,
        cpu_cores: RUN_LIMITS.cpuCores,
        timeout_ms: 30_000,
        cpu_time_ms: RUN_LIMITS.cpuTimeMs,
        wall_time_per_cpu_time: 1.5,
        wall_time_extra_ms: 1000,
        max_processes: 16,
        workspace_bytes: 256 * 1024 * 1024,
        tmp_bytes: 128 * 1024 * 1024,
        network: false,
        output_kept_bytes_per_stream: 64 * 1024,
        output_flood_bytes_both_streams: 8 * 1024 * 1024,
      });
      expect(body.run!['wall_time_rule']).to.match(/CPU time.*1\.5 × time \+ 1 s, at most 30 s/);
      expect(body.request).to.include({ code_max_bytes: 100_000, input_max_bytes: 100_000, extra_params_max_bytes: REQUEST_LIMITS.extraParamsMaxBytes });
      expect(body.account).to.include({
        submissions_per_minute: 30,
        pending_submissions: 8,
        runs_at_once: 2,
        sandbox_seconds_per_request: 330,
        problem_storage_bytes: 64 * 1024 * 1024,
        monthly_submissions: 100_000,
        max_monthly_submissions_any_plan: MAX_MONTHLY_LIMIT,
      });
      expect(body.websocket_runs_per_second_per_connection).to.equal(WEBSOCKET_RUNS_PER_SECOND);
      expect(body.problems).to.deep.equal({ test_file_max_bytes: 16 * 1024 * 1024, tests_max: 1000, upload_max_bytes: 64 * 1024 * 1024, checker_message_max_bytes: 4096 });
    });
  });

  describe('GET /api/compilers/', () => {
    it('lists the ten identifiers first, in order, with the installed version and availability', async () => {
      const res = await fetch(`${api.url}/api/compilers/`);
      expect(res.status).to.equal(200);
      const list = (await res.json()) as { id: string; language: string | null; version: string | null; available: boolean }[];
      // The ten of the interface document come first; recipes may add more after them.
      expect(list.map((c) => c.id).slice(0, INTERFACE_IDS.length)).to.deep.equal([...INTERFACE_IDS]);
      expect(list.find((c) => c.id === 'python-3.9.7')).to.deep.include({ id: 'python-3.9.7', language: 'python', version: '3.9.2', available: true });
      expect(list.find((c) => c.id === 'gcc-4.9')).to.include({ available: true, language: 'c' });
      expect(list.find((c) => c.id === 'g++-4.9')).to.include({ available: false, version: null });
      expect(list.filter((c) => c.available)).to.have.length(2);
    });

    it("gives each identifier the libraries installed with it: none for the ten, none where not installed", async () => {
      const list = (await (await fetch(`${api.url}/api/compilers/`)).json()) as { id: string; available: boolean; libraries: Record<string, string> }[];
      for (const c of list) expect(c.libraries, c.id).to.be.an('object');
      expect(list.find((c) => c.id === 'python-3.9.7')).to.deep.include({ available: true, libraries: {} });
      expect(list.find((c) => c.id === 'python-3.13')).to.deep.include({ available: false, libraries: {} });
    });

    it("gives each identifier its Piston language name and Judge0 id", async () => {
      const list = (await (await fetch(`${api.url}/api/compilers/`)).json()) as { id: string; piston: string; judge0: number | null }[];
      expect(list.find((c) => c.id === 'python-3.9.7')).to.include({ piston: 'python', judge0: 71 });
      expect(list.find((c) => c.id === 'dotnet-csharp-5')).to.include({ piston: 'csharp.net', judge0: 51 });
      expect(list.find((c) => c.id === 'haskell-9.2.7')).to.include({ piston: 'haskell', judge0: 61 });
    });
  });

  describe('GET /api/', () => {
    it('lists every endpoint with its method and a link to the OpenAPI document, with or without the slash', async () => {
      for (const path of ['/api/', '/api']) {
        const res = await fetch(`${api.url}${path}`);
        expect(res.status, path).to.equal(200);
        expect(res.headers.get('content-type')).to.match(/^application\/json/);
        const body = (await res.json()) as { service: string; openapi: string; endpoints: { method: string; path: string; summary: string; auth: string }[] };
        expect(body.service).to.equal('runbox');
        expect(body.openapi).to.equal('/api/openapi.json');
        expect(body.endpoints).to.deep.include({ method: 'POST', path: '/api/v2/run-code/', summary: "Submit code to run; the result goes to the key's callback URL.", auth: 'key' });
        // A WebSocket needs a key too, checked at its upgrade.
        expect(body.endpoints.find((e) => e.path === '/api/v2/ws/')?.auth).to.equal('key');
        const listed = body.endpoints.map((e) => `${e.method} ${e.path}`);
        for (const wanted of ['POST /api/v2/run-code-sync/', 'GET /api/usage/', 'GET /api/limits/', 'GET /api/compilers/', 'GET /api/openapi.json', 'GET /api/', 'POST /piston/api/v2/execute', 'POST /judge0/submissions']) {
          expect(listed, wanted).to.include(wanted);
        }
        // The link works, and the index lists what the document does.
        const doc = (await (await fetch(`${api.url}${body.openapi}`)).json()) as { paths: Record<string, Record<string, unknown>> };
        const documented = Object.entries(doc.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
        expect(listed.map((e) => e.replace(/:([A-Za-z_]+)/g, '{$1}')).sort()).to.deep.equal(documented.sort());
      }
    });

    it('follows the Accept rules of every API answer: 406 for HTML only, 405 for a POST', async () => {
      const html = await fetch(`${api.url}/api/`, { headers: { Accept: 'text/html' } });
      expect(html.status).to.equal(406);
      expect((await errorOf(html)).code).to.equal('not_acceptable');
      const post = await fetch(`${api.url}/api/`, { method: 'POST' });
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.match(/GET/);
    });
  });

  describe('GET /api/openapi.json', () => {
    it('documents the run endpoint with the same schema that validates it', async () => {
      const res = await fetch(`${api.url}/api/openapi.json`);
      expect(res.status).to.equal(200);
      const doc = (await res.json()) as {
        openapi: string;
        paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { required: string[]; properties: Record<string, { enum?: string[] }> } }> } }>>;
      };
      expect(doc.openapi).to.equal('3.1.0');
      const schema = doc.paths['/api/v2/run-code/']!.post!.requestBody!.content['application/json']!.schema;
      expect(schema.required).to.deep.equal(['compiler']);
      expect(Object.keys(schema.properties)).to.include.members(['code', 'files', 'main', 'args', 'compiler_options', 'limits', 'return_files']);
      expect(schema.properties.compiler!.enum!.slice(0, INTERFACE_IDS.length)).to.deep.equal([...INTERFACE_IDS]);
      expect(Object.keys(doc.paths)).to.include.members(['/api/usage/', '/api/limits/', '/api/compilers/']);
    });
  });
});
