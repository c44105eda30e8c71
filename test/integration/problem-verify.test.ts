import { expect } from 'chai';
import { deriveTimeLimit } from '../../src/problems/time-limit.js';
import { Client } from '../helpers/portal-client.js';
import { keyFor, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { makeZip, type ZipEntryInput } from '../helpers/zip.js';

// Verifying a package through the API with real sandboxed runs: its example submissions
// (written here) judged as ordinary submissions, the time limit derived from the accepted
// ones as problemtools derives it and stored with the version, mismatches reported; and a
// new version rejudging the account's earlier submissions.

const SUM_PY = 'a, b = map(int, input().split())\nprint(a + b)\n';
const SUM_C = '#include <stdio.h>\nint main(void) { long a, b; if (scanf("%ld %ld", &a, &b) != 2) return 1; printf("%ld\\n", a + b); return 0; }\n';
const OFF_PY = 'a, b = map(int, input().split())\nprint(a + b + 1)\n';
const LOOP_PY = 'x = 0\nwhile True:\n    x += 1\n';
const CRASH_PY = 'raise SystemExit(3)\n';

const sumData: ZipEntryInput[] = [
  { name: 'sum/data/sample/1.in', content: '1 2\n' },
  { name: 'sum/data/sample/1.ans', content: '3\n' },
  { name: 'sum/data/secret/1.in', content: '10 20\n' },
  { name: 'sum/data/secret/1.ans', content: '30\n' },
];

interface Check {
  state: string;
  phase: number;
  time_limit: { seconds: number; source: string; slowest_accepted?: number | null; ac_to_time_limit?: number };
  runs: { path?: string; previous_id?: string; state: string; expected?: string[]; verdict: string | null; code?: string | null; time: number | null; mismatches?: string[]; previous_verdict?: string | null; changed?: boolean }[];
  mismatches: number;
}

describe('verifying a problem package (example submissions) and rejudging', function () {
  let s: ResultsStack;
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9', 'gcc']);
    s = await resultsStack('problem_verify');
    await s.startRunner();
  });
  after(async () => s?.close());

  const upload = async (key: string, entries: ZipEntryInput[], id?: string, query = '') => {
    const res = await fetch(`${s.url}/api/v2/problems${id ? `/${id}` : ''}${query}`, { method: id ? 'PUT' : 'POST', headers: { Authorization: key, 'Content-Type': 'application/zip' }, body: new Uint8Array(makeZip(entries)) });
    const text = await res.text();
    expect(res.status, text).to.equal(id ? 200 : 201);
    return { body: JSON.parse(text) as { id: string; version: number; time_limit: { seconds: number; source: string }; example_submissions: { path: string; compiler: string | null; expected: string[] }[] }, headers: res.headers };
  };
  const until = async (key: string, url: string): Promise<Check> => {
    const deadline = Date.now() + 280_000;
    for (;;) {
      const res = await fetch(`${s.url}${url}`, { headers: { Authorization: key } });
      const text = await res.text();
      expect(res.status, text).to.equal(200);
      const check = JSON.parse(text) as Check;
      if (check.state === 'done') return check;
      if (Date.now() > deadline) throw new Error(`still running: ${text}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  it('accepted, wrong_answer, time_limit_exceeded and run_time_error submissions get their verdicts; the limit is derived from the slowest accepted run and stored', async () => {
    const { key } = await keyFor(s.db);
    const { body: problem } = await upload(key.key, [
      // Legacy: time_multiplier 5 (default), rounded up to whole seconds.
      { name: 'sum/problem.yaml', content: 'name: Sum\n' },
      ...sumData,
      { name: 'sum/submissions/accepted/sum.py', content: SUM_PY },
      { name: 'sum/submissions/accepted/sum.c', content: SUM_C },
      { name: 'sum/submissions/wrong_answer/off.py', content: OFF_PY },
      { name: 'sum/submissions/time_limit_exceeded/loop.py', content: LOOP_PY },
      { name: 'sum/submissions/run_time_error/crash.py', content: CRASH_PY },
    ]);
    // Unverified: no measured limit, the stated default (never the service's 30 s).
    expect(problem.time_limit).to.deep.equal({ seconds: 2, source: 'default' });
    expect(problem.example_submissions.map((x) => [x.path, x.compiler?.replace(/-.*/, ''), x.expected])).to.deep.equal([
      ['accepted/sum.c', 'gcc', ['accepted/']],
      ['accepted/sum.py', 'python', ['accepted/']],
      ['run_time_error/crash.py', 'python', ['run_time_error/']],
      ['time_limit_exceeded/loop.py', 'python', ['time_limit_exceeded/']],
      ['wrong_answer/off.py', 'python', ['wrong_answer/']],
    ]);

    const started = await fetch(`${s.url}/api/v2/problems/${problem.id}/verify`, { method: 'POST', headers: { Authorization: key.key } });
    const first = (await started.json()) as Check;
    expect(started.status, JSON.stringify(first)).to.equal(202);
    expect(first).to.include({ state: 'running', phase: 1 });
    // The accepted ones are measured first; the others wait for the limit.
    expect(first.runs.filter((r) => r.state === 'waiting').map((r) => r.path)).to.include.members(['wrong_answer/off.py', 'time_limit_exceeded/loop.py', 'run_time_error/crash.py']);

    const done = await until(key.key, `/api/v2/problems/${problem.id}/verify`);
    expect(done.runs.map((r) => [r.path, r.verdict, r.code, r.mismatches]), JSON.stringify(done)).to.deep.equal([
      ['accepted/sum.c', 'accepted', 'AC', []],
      ['accepted/sum.py', 'accepted', 'AC', []],
      ['run_time_error/crash.py', 'runtime_error', 'RTE', []],
      ['time_limit_exceeded/loop.py', 'timeout', 'TLE', []],
      ['wrong_answer/off.py', 'wrong_answer', 'WA', []],
    ]);
    expect(done.mismatches).to.equal(0);
    const slowest = Math.max(...done.runs.filter((r) => r.path!.startsWith('accepted/')).map((r) => r.time!));
    expect(done.time_limit).to.include({ source: 'derived', slowest_accepted: slowest, ac_to_time_limit: 5 });
    expect(done.time_limit.seconds).to.equal(deriveTimeLimit({ acToTimeLimit: 5, timeLimitToTle: 2, resolution: 1 }, slowest));

    const after = (await (await fetch(`${s.url}/api/v2/problems/${problem.id}`, { headers: { Authorization: key.key } })).json()) as { time_limit: unknown };
    expect(after.time_limit).to.deep.equal({ seconds: done.time_limit.seconds, source: 'derived' });
    // A run of the problem now has the derived limit.
    const run = await syncRun(s, key.key, { code: SUM_PY, compiler: 'python-3.9.7', problem: problem.id });
    expect(run.limits!.time).to.equal(done.time_limit.seconds);
  });

  it('a submission that does not get what its directory or @EXPECTED_RESULTS@ says is a mismatch; a stated limit (.timelimit) is used as it is', async () => {
    const { key } = await keyFor(s.db);
    const { body: problem } = await upload(key.key, [
      { name: 'sum/problem.yaml', content: 'name: Sum\n' },
      { name: 'sum/.timelimit', content: '3\n' },
      ...sumData,
      { name: 'sum/submissions/accepted/sum.py', content: SUM_PY },
      // Correct, but filed as a wrong answer.
      { name: 'sum/submissions/wrong_answer/correct.py', content: SUM_PY },
      // DOMjudge's line replaces the directory's expectation.
      { name: 'sum/submissions/mixed/either.py', content: `# @EXPECTED_RESULTS@: WRONG-ANSWER, TIMELIMIT\n${OFF_PY}` },
      { name: 'sum/submissions/mixed/wrong.py', content: `# @EXPECTED_RESULTS@: CORRECT\n${OFF_PY}` },
    ]);
    expect(problem.time_limit).to.deep.equal({ seconds: 3, source: 'stated' });
    const started = await fetch(`${s.url}/api/v2/problems/${problem.id}/verify`, { method: 'POST', headers: { Authorization: key.key } });
    expect(started.status).to.equal(202);
    const done = await until(key.key, `/api/v2/problems/${problem.id}/verify`);
    expect(done.time_limit).to.include({ seconds: 3, source: 'stated' });
    expect(done.runs.map((r) => [r.path, r.expected, r.code, r.mismatches]), JSON.stringify(done)).to.deep.equal([
      ['accepted/sum.py', ['accepted/'], 'AC', []],
      ['mixed/either.py', ['@EXPECTED_RESULTS@: WRONG-ANSWER, TIMELIMIT'], 'WA', []],
      ['mixed/wrong.py', ['@EXPECTED_RESULTS@: CORRECT'], 'WA', ['got WA, expected AC']],
      ['wrong_answer/correct.py', ['wrong_answer/'], 'AC', ['no test got WA (required)']],
    ]);
    expect(done.mismatches).to.equal(2);
  });

  it("the example submissions' files count in the account's storage allowance: a package whose submissions do not fit is refused, nothing stored", async () => {
    // The tests' 15 bytes fit; with the submission's they do not.
    const { key } = await keyFor(s.db, { limits: { problemStorageBytes: 30 } });
    const res = await fetch(`${s.url}/api/v2/problems`, {
      method: 'POST',
      headers: { Authorization: key.key, 'Content-Type': 'application/zip' },
      body: new Uint8Array(makeZip([{ name: 'sum/problem.yaml', content: 'name: Sum\n' }, ...sumData, { name: 'sum/submissions/accepted/sum.py', content: SUM_PY }])),
    });
    const text = await res.text();
    expect(res.status, text).to.equal(400);
    expect((JSON.parse(text) as { error: { code: string } }).error.code).to.equal('problem_storage_full');
    const { body: fits } = await upload(key.key, [{ name: 'sum/problem.yaml', content: 'name: Sum\n' }, ...sumData]);
    const list = (await (await fetch(`${s.url}/api/v2/problems`, { headers: { Authorization: key.key } })).json()) as { problems: { id: string }[]; storage: { used_bytes: number } };
    expect([list.problems.map((p) => p.id), list.storage.used_bytes]).to.deep.equal([[fits.id], 15]);
  });

  it('a problem without example submissions cannot be verified (400); another account\'s is a 404', async () => {
    const { key } = await keyFor(s.db);
    const { body: problem } = await upload(key.key, [{ name: 'sum/problem.yaml', content: 'name: Sum\n' }, ...sumData]);
    const res = await fetch(`${s.url}/api/v2/problems/${problem.id}/verify`, { method: 'POST', headers: { Authorization: key.key } });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('no_example_submissions');
    const other = await keyFor(s.db);
    const foreign = await fetch(`${s.url}/api/v2/problems/${problem.id}/verify`, { method: 'POST', headers: { Authorization: other.key.key } });
    expect(foreign.status).to.equal(404);
    const none = await fetch(`${s.url}/api/v2/problems/${problem.id}/verify`, { headers: { Authorization: key.key } });
    expect(none.status).to.equal(404);
  });

  it('PUT ?rejudge=N judges the newest N submissions of the earlier version on the new one and lists the verdicts that changed', async () => {
    const { key } = await keyFor(s.db);
    const { body: problem } = await upload(key.key, [{ name: 'sum/problem.yaml', content: 'name: Sum\n' }, ...sumData]);
    const right = await syncRun(s, key.key, { code: SUM_PY, compiler: 'python-3.9.7', problem: problem.id });
    const off = await syncRun(s, key.key, { code: OFF_PY, compiler: 'python-3.9.7', problem: problem.id });
    expect([right.verdict, off.verdict]).to.deep.equal(['accepted', 'wrong_answer']);
    // Version 2's answers are one more: the off-by-one program is now right and the other wrong.
    const bad = await fetch(`${s.url}/api/v2/problems/${problem.id}?rejudge=nope`, { method: 'PUT', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(makeZip(sumData)) });
    expect(bad.status).to.equal(400);
    const { body: v2, headers } = await upload(
      key.key,
      [
        { name: 'sum/problem.yaml', content: 'name: Sum\n' },
        { name: 'sum/data/sample/1.in', content: '1 2\n' },
        { name: 'sum/data/sample/1.ans', content: '4\n' },
        { name: 'sum/data/secret/1.in', content: '10 20\n' },
        { name: 'sum/data/secret/1.ans', content: '31\n' },
      ],
      problem.id,
      '?rejudge=5',
    );
    expect(v2.version).to.equal(2);
    expect(headers.get('link')).to.include(`/api/v2/problems/${problem.id}/rejudge`);
    // Nobody asks: the API's own loop admits the runs and ends the check.
    const deadline = Date.now() + 280_000;
    while ((await s.db.db.selectFrom('problem_checks').select('state').where('problem_id', '=', problem.id).executeTakeFirstOrThrow()).state !== 'done') {
      if (Date.now() > deadline) throw new Error('the rejudge did not end without being asked about');
      await new Promise((r) => setTimeout(r, 300));
    }
    const done = await until(key.key, `/api/v2/problems/${problem.id}/rejudge`);
    expect(done.runs.map((r) => [r.previous_id, r.previous_verdict, r.verdict, r.changed])).to.deep.equal([
      [off.id, 'wrong_answer', 'accepted', true],
      [right.id, 'accepted', 'wrong_answer', true],
    ]);
    expect(done.mismatches).to.equal(2);
  });

  it("the portal's Verify button (a form with the CSRF token) starts a verification; the problem's page shows its progress, then the report", async () => {
    const c = new Client(s.url);
    const email = `verify-${process.pid}-${Date.now()}@example.com`;
    const signup = await c.post('/signup', { email, password: 'a long enough password' });
    if (signup.res.status === 200) expect((await c.post('/login', { email, password: 'a long enough password' }, '/login')).res.status).to.equal(302);
    const form = new FormData();
    form.append('_csrf', await c.token('/problems'));
    form.append(
      'package',
      new Blob([new Uint8Array(makeZip([{ name: 'sum/problem.yaml', content: 'name: Portal sum\n' }, ...sumData, { name: 'sum/submissions/accepted/sum.py', content: SUM_PY }, { name: 'sum/submissions/wrong_answer/off.py', content: OFF_PY }]))], { type: 'application/zip' }),
      'sum.zip',
    );
    const made = await c.request('/problems', { method: 'POST', body: form });
    expect(made.res.status, made.body).to.equal(303);
    const page = made.res.headers.get('location')!.replace(/\?.*$/, '');
    const before = await c.request(page);
    expect(before.body).to.include('<button type="submit">Verify</button>').and.include('the default: not measured yet');
    // Without the token: refused, nothing started.
    expect((await c.request(`${page}/verify`, { form: {} })).res.status).to.equal(403);
    expect(await s.db.db.selectFrom('problem_checks').select('id').where('problem_id', '=', page.split('/')[2]!).execute()).to.deep.equal([]);
    const started = await c.post(`${page}/verify`, {}, page);
    expect([started.res.status, started.res.headers.get('location')]).to.deep.equal([303, `${page}?verifying=1#verify`]);
    const deadline = Date.now() + 280_000;
    let body = (await c.follow(started)).body;
    expect(body).to.match(/The verification has started|Running: \d of 2 submissions judged|Done:/);
    while (!body.includes('Done:')) {
      if (Date.now() > deadline) throw new Error('the verification did not end');
      await new Promise((r) => setTimeout(r, 500));
      body = (await c.request(page)).body;
    }
    expect(body).to.include('Done: every submission judged got the verdict expected');
    expect(body).to.match(/<tr data-submission="accepted\/sum.py">[\s\S]*?<td>accepted<\/td>/);
    expect(body).to.match(/<tr data-submission="wrong_answer\/off.py">[\s\S]*?<td>wrong_answer<\/td>/);
    expect(body).to.include('derived from the accepted submissions');
  });
});
