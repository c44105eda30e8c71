import { expect } from 'chai';
import { GUESS_BINARY, GUESS_LINEAR, GUESS_ONCE, GUESS_STALL, guessingInteractor } from '../helpers/checkers.js';
import { keyFor, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { makeZip } from '../helpers/zip.js';

// Interactive problems: a guessing game (binary search against an interactor written
// for the test in C++, both conventions) accepted, wrong, and with programs that stop
// early or stall, and an interactor that fails: every test ends with its verdict, none
// hangs.

const PY = 'python-3.9.7';
const GXX = 'g++-9';

describe('judged runs (interactors)', function () {
  let s: ResultsStack;
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9', 'gcc']);
    s = await resultsStack('judge_interactive');
    await s.startRunner();
  });
  after(async () => s?.close());

  const sync = (key: string, body: object) => syncRun(s, key, body);
  const testlib = { compiler: GXX, code: guessingInteractor(false), convention: 'testlib' };
  const kattis = { compiler: GXX, code: guessingInteractor(true), convention: 'kattis' };
  const tests = [{ input: '777 20' }, { input: '1 20' }, { input: '1000000 20' }];

  it('testlib: binary search is accepted on every test; the program reads the answers its guesses get', async () => {
    const { key } = await keyFor(s.db);
    const r = await sync(key.key, { code: GUESS_BINARY, compiler: PY, interactor: testlib, tests });
    expect(r.tests!.map((t) => [t.status, t.verdict])).to.deep.equal([['success', 'accepted'], ['success', 'accepted'], ['success', 'accepted']]);
    expect(r.tests![0]!.checker_message).to.match(/^ok found in \d+ guesses$/);
    expect(r).to.include({ verdict: 'accepted', score: 1 });
  });

  it('Kattis: the same game with exit 42/43 and judgemessage.txt; linear guessing is wrong', async () => {
    const { key } = await keyFor(s.db);
    const ok = await sync(key.key, { code: GUESS_BINARY, compiler: PY, interactor: kattis, tests: tests.slice(0, 1) });
    expect(ok.tests![0]).to.include({ verdict: 'accepted' });
    expect(ok.tests![0]!.checker_message).to.match(/^found in \d+ guesses$/);
    const wrong = await sync(key.key, { code: GUESS_LINEAR, compiler: PY, interactor: kattis, tests: [{ input: '777 20' }, { input: '3 20' }] });
    expect(wrong.tests!.map((t) => [t.verdict, t.checker_message])).to.deep.equal([['wrong_answer', 'more than 20 guesses'], ['accepted', 'found in 3 guesses']]);
  });

  it('a program that stops early: wrong answer from the interactor, no hang', async () => {
    const { key } = await keyFor(s.db);
    const r = await sync(key.key, { code: GUESS_ONCE, compiler: PY, interactor: testlib, input: '777 20' });
    expect(r).to.include({ verdict: 'wrong_answer', checker_message: 'wrong answer the program stopped after 1 guesses' });
  });

  it('a program that stalls without reading: its own timeout ends the test', async () => {
    const { key } = await keyFor(s.db);
    const started = Date.now();
    const r = await sync(key.key, { code: GUESS_STALL, compiler: PY, interactor: testlib, input: '777 20', limits: { wall_time: 2 } });
    expect(r).to.include({ status: 'timeout', verdict: 'timeout' });
    expect(Date.now() - started).to.be.lessThan(20_000);
  });

  it('an interactor that fails at once: checker_error, and the waiting program is not left hanging', async () => {
    const { key } = await keyFor(s.db);
    const started = Date.now();
    const r = await sync(key.key, { code: GUESS_BINARY, compiler: PY, interactor: testlib, input: 'not numbers' });
    expect(r).to.include({ verdict: 'checker_error', checker_message: 'the interactor exited with code 3: FAIL bad input' });
    expect(Date.now() - started).to.be.lessThan(20_000);
  });

  it('an interactive problem uploaded as a Kattis package (validation: custom interactive) and judged', async () => {
    const { key } = await keyFor(s.db);
    const zip = makeZip([
      { name: 'guess/problem.yaml', content: 'name: Guess\nvalidation: custom interactive\n' },
      { name: 'guess/data/sample/1.in', content: '5 20\n' },
      { name: 'guess/data/sample/1.ans', content: '' },
      { name: 'guess/data/secret/1.in', content: '999999 20\n' },
      { name: 'guess/data/secret/1.ans', content: '' },
      { name: 'guess/output_validators/guess/interactor.cpp', content: guessingInteractor(true) },
    ]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status, await up.clone().text()).to.equal(201);
    const problem = (await up.json()) as { id: string; interactor: { convention: string; compiler: string } };
    expect(problem.interactor.convention).to.equal('kattis');
    // The newest g++ this host offers (g++-9 where only the default images are installed).
    expect(problem.interactor.compiler).to.match(/^g\+\+-/);
    const ok = await sync(key.key, { code: GUESS_BINARY, compiler: PY, problem: problem.id });
    expect(ok.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['sample/1', 'accepted'], ['secret/1', 'accepted']]);
    const wrong = await sync(key.key, { code: GUESS_LINEAR, compiler: PY, problem: problem.id, stop_on_failure: true });
    expect(wrong.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['sample/1', 'accepted'], ['secret/1', 'wrong_answer']]);
  });
});
