import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setAccountLimits } from '../../src/accounts/accounts.js';
import { judgedTests } from '../../src/judge/submission-tests.js';
import { ownerAsker } from '../../src/problems/feedback.js';
import { billedSubmissions, keyFor, postJson, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { WsClient } from '../helpers/ws-client.js';
import { makeZip } from '../helpers/zip.js';

// Judged runs end to end with the built-in comparisons: expected outputs in a request,
// each verdict a test can get and the request's, weights, stop_on_failure and what it
// bills, a stored problem judged through the host's data cache (two runner processes,
// each with a cache of its own), an output of more than 8 MB compared in full, and
// another account's problem refused.

const PY = 'python-3.9.7';
const GCC = 'gcc-9';

describe('judged runs (built-in checkers)', function () {
  let s: ResultsStack;
  const caches: string[] = [];
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9', 'gcc']);
    caches.push(mkdtempSync(join(tmpdir(), 'runbox-judge-cache-a-')), mkdtempSync(join(tmpdir(), 'runbox-judge-cache-b-')));
    s = await resultsStack('judge');
    await s.startRunner({ env: { RUNBOX_DATA_CACHE_DIR: caches[0]! } });
  });
  after(async () => {
    await s?.close();
    for (const c of caches) rmSync(c, { recursive: true, force: true });
  });

  const sync = (key: string, body: object) => syncRun(s, key, body);

  it('a single run with expected_output: verdict, score and checker_message at the top, right after status', async () => {
    const { key } = await keyFor(s.db);
    const ok = await sync(key.key, { code: 'print(input()[::-1])', input: 'abc', expected_output: 'cba\n', compiler: PY });
    expect(ok).to.include({ status: 'success', verdict: 'accepted', score: 1, checker_message: null, output: 'cba\n' });
    expect(Object.keys(ok).slice(0, 6)).to.deep.equal(['id', 'compiler', 'status', 'verdict', 'score', 'checker_message']);
    expect(ok).to.not.have.property('tests');
    const wrong = await sync(key.key, { code: 'print(input())', input: 'abc', expected_output: 'cba\n', compiler: PY });
    expect(wrong).to.include({ status: 'success', verdict: 'wrong_answer', score: 0, checker_message: 'line 1: expected "cba", found "abc"' });
  });

  it('each test its verdict (accepted, wrong, presentation, runtime error, timeout), the first failure at the top, a weighted score', async () => {
    const { key } = await keyFor(s.db);
    const code = [
      'import sys, time',
      'n = int(input())',
      'if n == 3: print(1); print(2)',
      'elif n == 4: sys.exit(3)',
      'elif n == 5: time.sleep(10)',
      'else: print(n * 2)',
    ].join('\n');
    const r = await sync(key.key, {
      code,
      compiler: PY,
      limits: { wall_time: 1 },
      tests: [
        { name: 'one', input: '1', expected_output: '2', weight: 3 },
        { name: 'two', input: '2', expected_output: '5' },
        { input: '3', expected_output: '1 2' },
        { input: '4', expected_output: '' },
        { input: '5', expected_output: '' },
      ],
    });
    expect(r.tests!.map((t) => [t.name ?? null, t.status, t.verdict, t.score])).to.deep.equal([
      ['one', 'success', 'accepted', 1],
      ['two', 'success', 'wrong_answer', 0],
      [null, 'success', 'presentation_error', 0],
      [null, 'runtime_error', 'runtime_error', 0],
      [null, 'timeout', 'timeout', 0],
    ]);
    expect(r.tests![1]!.checker_message).to.equal('line 1: expected "5", found "4"');
    expect(Object.keys(r.tests![0]!).slice(0, 5)).to.deep.equal(['name', 'status', 'verdict', 'score', 'checker_message']);
    // The top is the first test not accepted; the score weighs test one three times.
    expect(r).to.include({ verdict: 'wrong_answer', status: 'success', output: '4\n', score: 3 / 7, checker_message: 'line 1: expected "5", found "4"' });
  });

  it('floats within and past the tolerance, unordered lines, tokens across line breaks, exact', async () => {
    const { key } = await keyFor(s.db);
    const floats = await sync(key.key, {
      code: 'print(float(input()) / 3)',
      compiler: PY,
      checker: { type: 'floats', absolute: 1e-3 },
      tests: [{ input: '1', expected_output: '0.3333' }, { input: '1', expected_output: '0.332' }],
    });
    expect(floats.tests!.map((t) => t.verdict)).to.deep.equal(['accepted', 'wrong_answer']);
    const unordered = await sync(key.key, { code: 'print("b\\na\\nc")', compiler: PY, checker: { type: 'unordered_lines' }, expected_output: 'a\nb\nc\n' });
    expect(unordered.verdict).to.equal('accepted');
    const tokens = await sync(key.key, { code: 'print("1 2"); print("3")', compiler: PY, checker: { type: 'tokens' }, expected_output: '1\n2\n3' });
    expect(tokens.verdict).to.equal('accepted');
    const exact = await sync(key.key, { code: 'print("1 2")', compiler: PY, checker: { type: 'exact' }, expected_output: '1 2' });
    expect(exact).to.include({ verdict: 'presentation_error' });
  });

  it("kattis: Kattis' default validator by name, its flags; tokens and floats with case_sensitive false", async () => {
    const { key } = await keyFor(s.db);
    const hello = await sync(key.key, {
      code: 'print("Hello World!")\nprint("NaN")',
      compiler: PY,
      checker: { type: 'kattis' },
      tests: [{ input: '', expected_output: 'Hello world!\nnan\n' }, { input: '', expected_output: 'Hello world! inf' }],
    });
    expect(hello.tests!.map((t) => t.verdict)).to.deep.equal(['accepted', 'wrong_answer']);
    expect(hello.tests![1]!.checker_message).to.equal('Wrong answer on line 2 of output (corresponding to line 1 in answer file)\nString tokens mismatch\nJudge: "inf"\nUser: "NaN"');
    const sensitive = await sync(key.key, { code: 'print("Hello World!")', compiler: PY, checker: { type: 'kattis', flags: ['case_sensitive'] }, expected_output: 'Hello world!' });
    expect(sensitive.verdict).to.equal('wrong_answer');
    const floats = await sync(key.key, {
      code: 'print("3.14000000e-2 0x1p-1 YES")',
      compiler: PY,
      checker: { type: 'kattis', flags: ['float_relative_tolerance', '1e-9'] },
      expected_output: '0.0314 0.5 yes\n',
    });
    expect(floats).to.include({ verdict: 'accepted', score: 1 });
    const spaces = await sync(key.key, { code: 'print("1  2")', compiler: PY, checker: { type: 'kattis', flags: ['space_change_sensitive'] }, expected_output: '1 2\n' });
    expect(spaces.verdict).to.equal('wrong_answer');
    const tokens = await sync(key.key, { code: 'print("Hello World!")', compiler: PY, checker: { type: 'tokens', case_sensitive: false }, expected_output: 'hello world!' });
    expect(tokens.verdict).to.equal('accepted');
    const strict = await sync(key.key, { code: 'print("Hello World!")', compiler: PY, checker: { type: 'tokens' }, expected_output: 'hello world!' });
    expect(strict.verdict).to.equal('wrong_answer');
    // A flag the default validator does not know is refused before anything runs.
    const bad = await postJson(`${s.url}/api/v2/run-code-sync/`, key.key, { code: 'print(1)', compiler: PY, expected_output: '1', checker: { type: 'kattis', flags: ['ignore_case'] } });
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error.message).to.match(/checker\.flags: "ignore_case" is not a flag of the default validator/);
  });

  it('stop_on_failure: the tests after the first failure are skipped, not counted and not billed', async () => {
    const { accountId, key } = await keyFor(s.db);
    const r = await sync(key.key, {
      code: 'print(input())',
      compiler: PY,
      stop_on_failure: true,
      tests: [{ input: 'a', expected_output: 'a' }, { input: 'b', expected_output: 'x' }, { input: 'c', expected_output: 'c' }, { input: 'd', expected_output: 'd' }],
    });
    expect(r.tests!.map((t) => [t.status, t.verdict])).to.deep.equal([['success', 'accepted'], ['success', 'wrong_answer'], ['skipped', 'skipped'], ['skipped', 'skipped']]);
    expect(r.tests![2]).to.deep.equal({ status: 'skipped', verdict: 'skipped', score: 0, checker_message: null, output: '', error: '', exit_code: null, signal: null, time: null, total: null, memory: null, limit_exceeded: null, truncated: false });
    expect(r).to.include({ verdict: 'wrong_answer', score: 0.25 });
    expect(await billedSubmissions(s, accountId)).to.equal(2);
    const row = await s.db.db.selectFrom('submissions').select('units').where('id', '=', r.id).executeTakeFirstOrThrow();
    expect(row.units).to.equal(2);
    // Without it every test runs and is billed.
    await sync(key.key, { code: 'print(input())', compiler: PY, tests: [{ input: 'a', expected_output: 'x' }, { input: 'b', expected_output: 'b' }] });
    expect(await billedSubmissions(s, accountId)).to.equal(4);
  });

  it('a compile error is the verdict when the program does not build', async () => {
    const { key } = await keyFor(s.db);
    const r = await sync(key.key, { code: 'int main( {', compiler: GCC, expected_output: '1' });
    expect(r).to.include({ status: 'compile_error', verdict: 'compile_error', score: 0 });
  });

  it("a judged run checks a Python program first as judges do (py_compile): a syntax error is compile_error with Python's message and no test runs; a plain run and Judge0's keep the run's error", async () => {
    const { key } = await keyFor(s.db);
    const code = 'print("a")\nprint("b"\n';
    const judged = await sync(key.key, { code, compiler: PY, tests: [{ input: '1', expected_output: 'a' }, { input: '2', expected_output: 'a' }] });
    expect(judged).to.include({ status: 'compile_error', verdict: 'compile_error', score: 0, output: '' });
    expect(judged.compile_output).to.match(/SyntaxError/).and.to.match(/line 2/);
    expect(judged).to.not.have.property('tests');
    // A program that passes the check runs its tests, the check's silence its compile output.
    const fine = await sync(key.key, { code: 'print("a")', compiler: PY, tests: [{ input: '1', expected_output: 'a' }] });
    expect(fine).to.include({ status: 'success', verdict: 'accepted', compile_output: '' });
    // A plain run of the same program is what it was: the interpreter's error, as Piston's and Judge0's clients expect.
    const plain = await sync(key.key, { code, compiler: PY, input: '' });
    expect(plain).to.include({ status: 'runtime_error', compile_output: null, output: '' });
    expect(plain.error).to.match(/SyntaxError/);
    const res = await fetch(`${s.url}/judge0/submissions?wait=true&fields=status,compile_output`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key.key },
      body: JSON.stringify({ source_code: code, language_id: 71, expected_output: 'a' }),
    });
    expect(await res.json()).to.deep.equal({ status: { id: 11, description: 'Runtime Error (NZEC)' }, compile_output: null });
  });

  it('refuses judging fields that do not go together, before anything is stored', async () => {
    const { accountId, key } = await keyFor(s.db);
    const cases: [object, RegExp][] = [
      [{ tests: [{ input: '1', expected_output: '1' }, { input: '2' }] }, /tests.1: expected_output is missing/],
      [{ input: '1', checker: { type: 'tokens' } }, /checker compares the output with expected_output: give it/],
      [{ input: '1', stop_on_failure: true }, /stop_on_failure needs verdicts/],
      [{ tests: [{ input: '1', expected_output: '1' }], expected_output: '1' }, /expected_output goes with input/],
      [{ problem: '00000000-0000-0000-0000-000000000000', input: '1' }, /give either problem or input/],
      [{ input: '1', expected_output: '1', checker: { type: 'program', compiler: GCC, convention: 'testlib' } }, /checker.code: give either code or files/],
    ];
    for (const [extra, message] of cases) {
      const res = await postJson(`${s.url}/api/v2/run-code-sync/`, key.key, { code: 'print(1)', compiler: PY, ...extra });
      expect(res.status, JSON.stringify(extra)).to.equal(400);
      expect(((await res.json()) as { error: { message: string } }).error.message).to.match(message);
    }
    expect(await billedSubmissions(s, accountId)).to.equal(0);
  });

  it('a WebSocket run message with expected_output and a checker: its result carries the verdict', async () => {
    const { key } = await keyFor(s.db);
    const ws = await WsClient.open(`${s.url.replace('http', 'ws')}/api/v2/ws/`, { Authorization: key.key });
    try {
      ws.send({ type: 'run', id: 'r1', code: 'print("1.0000001 x")', compiler: PY, expected_output: '1 x', checker: { type: 'floats' } });
      const result = await ws.until((m) => m.type === 'result' && m.id === 'r1');
      expect(result).to.include({ status: 'success', verdict: 'accepted', score: 1 });
      // One run per second per connection.
      await new Promise((r) => setTimeout(r, 1100));
      ws.send({ type: 'run', id: 'r2', code: 'print(1)', compiler: PY, input: '', checker: { type: 'tokens' } });
      const refused = await ws.until((m) => m.type === 'error' && m.id === 'r2');
      expect(refused.message).to.match(/checker compares the output with expected_output/);
    } finally {
      ws.close();
    }
  });

  it("a judged submission's tests as a page shows them: input, expected output, output and where they first differ", async () => {
    const { accountId, key } = await keyFor(s.db);
    const r = await sync(key.key, { code: 'n = int(input())\nfor i in range(n): print(i if i != 2 else "two")', compiler: PY, tests: [{ name: 'ok', input: '2', expected_output: '0\n1' }, { input: '4', expected_output: '0\n1\n2\n3\n' }] });
    const view = await judgedTests(s.db.db, ownerAsker(accountId), r.id);
    expect(view).to.deep.equal([
      { name: 'ok', verdict: 'accepted', score: 1, checker_message: null, input: '2', expected_output: '0\n1', output: '0\n1\n', diff: null },
      { name: null, verdict: 'wrong_answer', score: 0, checker_message: 'line 3: expected "2", found "two"', input: '4', expected_output: '0\n1\n2\n3\n', output: '0\n1\ntwo\n3\n', diff: { line: 3, expected: ['2', '3'], found: ['two', '3'] } },
    ]);
    expect(await judgedTests(s.db.db, ownerAsker((await keyFor(s.db)).accountId), r.id)).to.equal(undefined);
  });

  it("Judge0's expected_output is judged over the whole output, its verdict Judge0's status", async () => {
    const { key } = await keyFor(s.db);
    const judge0 = (body: object) =>
      fetch(`${s.url}/judge0/submissions?wait=true&fields=status,message`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key.key }, body: JSON.stringify(body) });
    // 70,000 bytes: past the 64 KB a result keeps, the comparison still sees them all.
    const long = 'a'.repeat(70_000);
    let res = await judge0({ source_code: `print("a" * 70000)`, language_id: 71, expected_output: long });
    expect(await res.json()).to.deep.equal({ status: { id: 3, description: 'Accepted' }, message: null });
    res = await judge0({ source_code: `print("a" * 69999 + "b")`, language_id: 71, expected_output: long });
    expect(await res.json()).to.deep.equal({ status: { id: 4, description: 'Wrong Answer' }, message: null });
    // As Judge0 compares: trailing whitespace of each line and trailing empty lines do not count.
    res = await judge0({ source_code: 'print("x  ")\nprint()', language_id: 71, expected_output: 'x' });
    expect(((await res.json()) as { status: { id: number } }).status.id).to.equal(3);
  });

  describe('stored problems', () => {
    const bigLines = (n: number, last?: string) => {
      const lines = Array.from({ length: n }, (_, i) => `${i} ${i * 7}`);
      if (last !== undefined) lines[n - 1] = last;
      return `${lines.join('\n')}\n`;
    };
    let problemId: string;
    let owner: { accountId: string; key: { key: string } };

    before(async () => {
      owner = await keyFor(s.db, { limits: { testsPerRequest: 20 } });
      // A program printing i and 7i for i below n (from its input), and an answer of more than 8 MB.
      const answer = bigLines(600_000);
      expect(Buffer.byteLength(answer)).to.be.greaterThan(8 * 1024 * 1024);
      const res = await fetch(`${s.url}/api/v2/problems`, {
        method: 'POST',
        headers: { Authorization: owner.key.key, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          name: 'Sevens',
          checker: { type: 'lines' },
          limits: { time: 10 },
          tests: [
            { name: 'small', input: '3', expected_output: bigLines(3), sample: true },
            { name: 'big', input: '600000', expected_output: answer },
          ],
        }),
      });
      expect(res.status).to.equal(201);
      problemId = ((await res.json()) as { id: string }).id;
    });

    const sevens = (wrongLast: boolean) =>
      `import sys\nn = int(input())\nout = [f"{i} {i * 7}" for i in range(n)]\n${wrongLast ? 'out[-1] = "wrong"\n' : ''}sys.stdout.write("\\n".join(out) + "\\n")\n`;

    it('a run names the problem: its tests by name, the version it ran; more than 8 MB of output compared in full', async () => {
      const ok = await sync(owner.key.key, { code: sevens(false), compiler: PY, problem: problemId });
      expect(ok.tests!.map((t) => [t.name, t.status, t.verdict, t.truncated])).to.deep.equal([['small', 'success', 'accepted', false], ['big', 'success', 'accepted', true]]);
      expect(ok).to.deep.include({ verdict: 'accepted', score: 1, problem: { id: problemId, version: 1 } });
      expect(ok.tests![1]!.output.length).to.equal(65536);
      const wrong = await sync(owner.key.key, { code: sevens(true), compiler: PY, problem: problemId });
      expect(wrong.tests!.map((t) => t.verdict)).to.deep.equal(['wrong_answer', 'wrong_answer']);
      expect(wrong.tests![1]!.checker_message).to.equal('line 600000: expected "599999 4199993", found "wrong"');
      expect(await billedSubmissions(s, owner.accountId)).to.equal(4);
    });

    it('judged on a second runner process with a cache of its own', async () => {
      const first = readdirSync(caches[0]!);
      expect(first.length).to.be.greaterThanOrEqual(3);
      await s.runner!.stop();
      await s.startRunner({ env: { RUNBOX_DATA_CACHE_DIR: caches[1]!, RUNBOX_SANDBOX_UID_BASE: String(Number(s.env.RUNBOX_SANDBOX_UID_BASE) + 10) } });
      const ok = await sync(owner.key.key, { code: sevens(false), compiler: PY, problem: problemId });
      expect(ok.verdict).to.equal('accepted');
      expect(readdirSync(caches[1]!).sort()).to.deep.equal([...first].sort());
    });

    it("another account's problem is a 404, nothing billed", async () => {
      const other = await keyFor(s.db);
      const res = await postJson(`${s.url}/api/v2/run-code-sync/`, other.key.key, { code: 'print(1)', compiler: PY, problem: problemId });
      expect(res.status).to.equal(404);
      expect(((await res.json()) as { error: { message: string } }).error.message).to.equal(`no problem ${problemId}`);
      expect(await billedSubmissions(s, other.accountId)).to.equal(0);
    });

    it("the plan's tests per request bound a problem's tests: refused at upload, and at each run of one stored before the plan was lowered", async () => {
      const small = await keyFor(s.db, { limits: { testsPerRequest: 1 } });
      const tests = [{ input: '1', expected_output: '1' }, { input: '2', expected_output: '2' }];
      const refused = await postJson(`${s.url}/api/v2/problems`, small.key.key, { tests });
      expect(refused.status).to.equal(400);
      const { error } = (await refused.json()) as { error: { code: string; message: string } };
      expect(error.code).to.equal('too_many_tests');
      expect(error.message).to.include('at most 1 tests per request');
      const later = await keyFor(s.db);
      const stored = await postJson(`${s.url}/api/v2/problems`, later.key.key, { tests });
      expect(stored.status).to.equal(201);
      const id = ((await stored.json()) as { id: string }).id;
      await setAccountLimits(s.db.db, later.accountId, { testsPerRequest: 1 });
      const run = await postJson(`${s.url}/api/v2/run-code-sync/`, later.key.key, { code: 'print(1)', compiler: PY, problem: id });
      expect(run.status).to.equal(400);
      expect(((await run.json()) as { error: { code: string } }).error.code).to.equal('too_many_tests');
    });
  });

  // After the stored problems' tests, whose runner caches must hold theirs alone.
  describe('Kattis packages', () => {
    it("a Kattis package without a validator: the default validator, problem.yaml's validator_flags and each group's testdata.yaml flags", async () => {
      const { key } = await keyFor(s.db);
      const zip = makeZip([
        { name: 'p/problem.yaml', content: 'name: Greeting\nvalidator_flags: float_absolute_tolerance 0.01\n' },
        { name: 'p/data/sample/1.in', content: 'hello 1\n' },
        { name: 'p/data/sample/1.ans', content: 'Hello world! 0.5\n' },
        { name: 'p/data/secret/strict/testdata.yaml', content: 'output_validator_flags: case_sensitive\n' },
        { name: 'p/data/secret/strict/1.in', content: 'hello 1\n' },
        { name: 'p/data/secret/strict/1.ans', content: 'Hello world! 0.5\n' },
      ]);
      const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
      expect(up.status, await up.clone().text()).to.equal(201);
      const problem = (await up.json()) as { id: string; checker: object };
      expect(problem.checker).to.deep.equal({ type: 'kattis', flags: ['float_absolute_tolerance', '0.01'] });
      const r = await sync(key.key, { code: 'input()\nprint("Hello World! 5.001e-1")', compiler: PY, problem: problem.id });
      expect(r.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['sample/1', 'accepted'], ['secret/strict/1', 'wrong_answer']]);
      expect(r.tests![1]!.checker_message).to.match(/String tokens mismatch\nJudge: "world!"\nUser: "World!"/);
    });

    it("a DOMjudge package (domjudge-problem.ini) without a validator: DOMjudge's compare, where nan matches -nan", async () => {
      const { key } = await keyFor(s.db);
      const zip = makeZip([
        { name: 'domjudge-problem.ini', content: "name='Roots'\nspecial_compare=''\n" },
        { name: 'problem.yaml', content: 'validator_flags: float_tolerance 1e-6\n' },
        { name: 'data/secret/1.in', content: '-1\n' },
        { name: 'data/secret/1.ans', content: 'nan\n' },
        { name: 'data/secret/2.in', content: '2\n' },
        { name: 'data/secret/2.ans', content: '1.41421356\n' },
      ]);
      const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
      expect(up.status, await up.clone().text()).to.equal(201);
      const problem = (await up.json()) as { id: string; checker: object };
      expect(problem.checker).to.deep.equal({ type: 'domjudge', flags: ['float_tolerance', '1e-6'] });
      // glibc's printf writes a negative NaN as -nan.
      const r = await sync(key.key, { code: 'import math\nx = float(input())\nprint("-nan" if x < 0 else math.sqrt(x))', compiler: PY, problem: problem.id });
      expect(r.tests!.map((t) => t.verdict)).to.deep.equal(['accepted', 'accepted']);
    });
  });
});
