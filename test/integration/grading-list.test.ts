import { expect } from 'chai';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Client } from '../helpers/portal-client.js';
import { enqueue } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';

// The grading list over HTTP, both faces of the one query (src/grading/list.ts):
// GET /api/v2/submissions/ (newest first, paged, filters by problem, key, verdict and
// date, CSV and JSON lines) and the portal's Submissions page, its CSV export and a
// problem's page. Rows are stored as the runner would have ended them.

const PASSWORD = 'a long enough password';

interface Line {
  id: string;
  verdict: string | null;
  score: number | null;
  key_id: string | null;
  problem: { id: string; version: number | null; name: string | null } | null;
}

/** CSV (RFC 4180) into rows of fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') row.push(field), (field = '');
    else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(field), rows.push(row), (row = []), (field = ''), i++;
    } else field += ch;
  }
  return rows;
}

describe('grading list: GET /api/v2/submissions/ and the portal', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let c: Client;
  let accountId: string;
  let key: string;
  let keyId: string;
  let otherKeyId: string;
  let problemId: string;
  /** Oldest first. */
  const made: { id: string; verdict: string | null; keyId: string; problem: boolean; day: string }[] = [];

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${api.url}${path}`, { headers: { Authorization: key, ...headers } });
  const ids = (lines: Line[]) => lines.map((l) => l.id);
  const newestFirst = (pick: (m: (typeof made)[number]) => boolean) => made.filter(pick).map((m) => m.id).reverse();

  before(async () => {
    t = await freshDatabase('grading_list');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
    c = new Client(api.url);
    const email = `grading-${process.pid}@example.com`;
    expect((await c.post('/signup', { email, password: PASSWORD })).res.status).to.equal(302);
    accountId = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
    const makeKey = async (name: string) => {
      const page = await c.follow(await c.post('/keys', { app_name: name, kind: 'api' }, '/keys/new'));
      return { key: /id="new-key"[^>]*value="(rbx_[^"]+)"/.exec(page.body)![1]!, id: /\/keys\/(\d+)/.exec(page.body)![1]! };
    };
    ({ key, id: keyId } = await makeKey('class A'));
    otherKeyId = (await makeKey('class B')).id;
    const stored = await fetch(`${api.url}/api/v2/problems/`, {
      method: 'POST',
      headers: { Authorization: key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Sum, "two" numbers', tests: [{ input: '1 2\n', expected_output: '3\n', sample: true }, { input: '5 5\n', expected_output: '10\n' }] }),
    });
    expect(stored.status).to.equal(201);
    problemId = ((await stored.json()) as { id: string }).id;

    // Seven runs over three days: judged ones of the problem (accepted, wrong answer, partial), plain ones.
    const plan: [string | null, string, boolean, string][] = [
      ['accepted', keyId, true, '2026-11-01'],
      ['wrong_answer', keyId, true, '2026-11-01'],
      [null, otherKeyId, false, '2026-11-02'],
      ['partial', otherKeyId, true, '2026-11-02'],
      ['accepted', otherKeyId, true, '2026-11-03'],
      [null, keyId, false, '2026-11-03'],
      ['wrong_answer', keyId, true, '2026-11-03'],
    ];
    let n = 0;
    for (const [verdict, k, problem, day] of plan) {
      const createdAt = new Date(`${day}T10:00:${String(n++).padStart(2, '0')}Z`);
      const id = await enqueue(t.db, accountId, { keyId: k, createdAt });
      const score = verdict === 'accepted' ? 1 : verdict === 'partial' ? 0.5 : verdict === 'wrong_answer' ? 0 : undefined;
      const result = successResult(id, { ...(verdict ? { verdict: verdict as never, score } : {}) });
      await t.db
        .updateTable('submissions')
        .set({
          state: 'finished',
          finished_at: createdAt,
          result: JSON.stringify(result),
          ...(problem ? { run_options: JSON.stringify({ judge: { checker: { type: 'lines' }, interactor: null, stop_on_failure: false, problem: { id: problemId, version: 1 } } }) } : {}),
        })
        .where('id', '=', id)
        .execute();
      made.push({ id, verdict, keyId: k, problem, day });
    }
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  it('answers a page newest first, with verdict, score and problem; next pages on with the same filters', async () => {
    const res = await get('/api/v2/submissions/?limit=3');
    expect(res.status).to.equal(200);
    const page = (await res.json()) as { submissions: Line[]; more: number; next: string | null };
    expect(ids(page.submissions)).to.deep.equal(newestFirst(() => true).slice(0, 3));
    expect(page.more).to.equal(4);
    const first = page.submissions[0]!;
    expect(first.verdict).to.equal('wrong_answer');
    expect(first.score).to.equal(0);
    expect(first.problem).to.deep.equal({ id: problemId, version: 1, name: 'Sum, "two" numbers' });
    expect(page.submissions[1]!.problem).to.equal(null);
    const rest = (await (await get(page.next!)).json()) as { submissions: Line[]; more: number; next: string | null };
    expect(ids(rest.submissions)).to.deep.equal(newestFirst(() => true).slice(3, 6));
    // Without a trailing slash too.
    expect((await get('/api/v2/submissions')).status).to.equal(200);
  });

  it('filters by problem, key, verdict and date, alone and together', async () => {
    const list = async (q: string) => ids(((await (await get(`/api/v2/submissions/?${q}`)).json()) as { submissions: Line[] }).submissions);
    expect(await list(`problem=${problemId}`)).to.deep.equal(newestFirst((m) => m.problem));
    expect(await list(`key=${otherKeyId}`)).to.deep.equal(newestFirst((m) => m.keyId === otherKeyId));
    expect(await list('verdict=wrong_answer')).to.deep.equal(newestFirst((m) => m.verdict === 'wrong_answer'));
    // A run not judged is found by its status.
    expect(await list('verdict=success')).to.deep.equal(newestFirst((m) => m.verdict === null));
    expect(await list('from=2026-11-02&to=2026-11-02')).to.deep.equal(newestFirst((m) => m.day === '2026-11-02'));
    expect(await list('from=2026-11-03T00:00:00Z')).to.deep.equal(newestFirst((m) => m.day === '2026-11-03'));
    expect(await list(`problem=${problemId}&key=${keyId}&verdict=accepted`)).to.deep.equal(newestFirst((m) => m.problem && m.keyId === keyId && m.verdict === 'accepted'));
    // Another problem's id lists nothing (not another account's runs).
    expect(await list('problem=00000000-0000-4000-8000-000000000000')).to.deep.equal([]);
  });

  it('refuses a wrong filter, limit or format with 400 naming it', async () => {
    for (const [q, code, words] of [
      ['problem=nope', 'invalid_request', 'problem must be a problem id'],
      ['key=abc', 'invalid_request', 'key must be a key id'],
      ['from=yesterday', 'invalid_request', 'from must be a date'],
      ['limit=0', 'invalid_request', 'limit must be a whole number from 1 to 1000'],
      ['format=xml', 'invalid_request', 'format must be one of: json, csv, jsonl'],
      ['colour=red', 'unknown_field', 'unknown field colour'],
      ['after=x', 'invalid_request', 'after must be the id'],
    ] as const) {
      const res = await get(`/api/v2/submissions/?${q}`);
      expect(res.status, q).to.equal(400);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code, q).to.equal(code);
      expect(body.error.message, q).to.include(words);
    }
    expect((await fetch(`${api.url}/api/v2/submissions/`)).status).to.equal(401);
  });

  it('exports CSV (one row per submission: verdict, score, compiler, key, time) and JSON lines, filtered', async () => {
    const res = await get(`/api/v2/submissions/?format=csv&problem=${problemId}`, { Accept: 'text/csv' });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/csv/);
    const rows = parseCsv(await res.text());
    const header = rows[0]!;
    for (const col of ['id', 'created_at', 'problem_id', 'problem_name', 'key_id', 'key_prefix', 'compiler', 'verdict', 'score', 'time']) expect(header).to.include(col);
    const body = rows.slice(1).map((r) => Object.fromEntries(header.map((h, i) => [h, r[i]])));
    expect(body.map((r) => r['id'])).to.deep.equal(newestFirst((m) => m.problem));
    expect(body[0]!['verdict']).to.equal('wrong_answer');
    expect(body[0]!['score']).to.equal('0');
    expect(body[0]!['compiler']).to.equal('python-3.9.7');
    expect(body[0]!['problem_name']).to.equal('Sum, "two" numbers');
    expect(body[0]!['key_id']).to.equal(keyId);
    expect(body[0]!['time']).to.equal('0.01');
    expect(body.find((r) => r['verdict'] === 'partial')!['score']).to.equal('0.5');

    const lines = await get('/api/v2/submissions/?format=jsonl&verdict=accepted', { Accept: 'application/x-ndjson' });
    expect(lines.status).to.equal(200);
    expect(lines.headers.get('content-type')).to.match(/^application\/x-ndjson/);
    const parsed = (await lines.text()).trimEnd().split('\n').map((l) => JSON.parse(l) as Line);
    expect(ids(parsed)).to.deep.equal(newestFirst((m) => m.verdict === 'accepted'));
    expect(parsed[0]!.score).to.equal(1);
  });

  it('documents the query as OpenAPI parameters', async () => {
    const doc = (await (await fetch(`${api.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>> };
    const names = doc.paths['/api/v2/submissions/']!['get']!.parameters!.map((p) => `${p.in}:${p.name}`);
    expect(names).to.include.members(['query:problem', 'query:key', 'query:verdict', 'query:from', 'query:to', 'query:limit', 'query:after', 'query:format']);
  });

  it('the portal lists the same, filters it, exports the CSV, and a problem page lists its own', async () => {
    const rowsOf = (body: string) => [...body.matchAll(/<tr data-submission-id="([^"]+)"/g)].map((m) => m[1]);
    const all = await c.request('/submissions');
    expect(all.res.status).to.equal(200);
    expect(rowsOf(all.body)).to.deep.equal(newestFirst(() => true));
    expect(all.body).to.include('Wrong answer').and.include('50%').and.include('Partly accepted');
    const filtered = await c.request(`/submissions?problem=${problemId}&verdict=wrong_answer&key=&from=&to=`);
    expect(rowsOf(filtered.body)).to.deep.equal(newestFirst((m) => m.problem && m.verdict === 'wrong_answer'));
    // The export link carries the filter (empty fields dropped).
    const href = /<a href="([^"]+)" download="submissions.csv">Export CSV<\/a>/.exec(filtered.body)![1]!.replace(/&amp;/g, '&');
    expect(href).to.equal(`/submissions.csv?problem=${problemId}&verdict=wrong_answer`);
    const csv = await c.request(href);
    expect(csv.res.status).to.equal(200);
    expect(csv.res.headers.get('content-disposition')).to.include('submissions.csv');
    expect(parseCsv(csv.body).slice(1).map((r) => r[0])).to.deep.equal(newestFirst((m) => m.problem && m.verdict === 'wrong_answer'));
    // A wrong filter says so on the page.
    const wrong = await c.request('/submissions?from=tomorrow');
    expect(wrong.res.status).to.equal(400);
    expect(wrong.body).to.include('From must be a date');

    const problemPage = await c.request(`/problems/${problemId}`);
    expect(rowsOf(problemPage.body)).to.deep.equal(newestFirst((m) => m.problem));
    expect(problemPage.body).to.include(`href="/submissions?problem=${problemId}"`);

    // A wrong answer's page reads as a wrong answer, and names its problem and version.
    const wa = made.filter((m) => m.verdict === 'wrong_answer').at(-1)!;
    const page = await c.request(`/submissions/${wa.id}`);
    expect(page.body).to.match(/data-field="status" data-outcome="wrong_answer">Wrong answer · 0%</);
    expect(page.body).to.match(/data-field="problem"><a href="\/problems\/[^"]+">Sum, &quot;two&quot; numbers<\/a> · version 1</);
    expect(page.body).not.to.include('data-field="result.status"');
  });

  it("another account sees none of them", async () => {
    const other = new Client(api.url);
    expect((await other.post('/signup', { email: `grading-other-${process.pid}@example.com`, password: PASSWORD })).res.status).to.equal(302);
    const page = await other.request(`/submissions?problem=${problemId}`);
    expect(page.body).not.to.include('data-submission-id');
    const answer = (await (await get('/api/v2/submissions/')).json()) as { submissions: Line[] };
    expect(answer.submissions).to.have.length(made.length);
  });
});
