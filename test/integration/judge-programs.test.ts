import { expect } from 'chai';
import type { SandboxSpec } from '../../src/sandbox/spec.js';
import { KATTIS_ARGUMENTS_VALIDATOR, KATTIS_VALIDATOR, POLYGON_CHECKER, SUM_PROGRAM, TESTLIB_CHECKER, TESTLIB_H, TESTLIB_PARTIAL_CHECKER } from '../helpers/checkers.js';
import { billedSubmissions, keyFor, recordingSandbox, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { SPECS_ATTACK } from '../helpers/specs-attack.js';
import { makeZip } from '../helpers/zip.js';

// Checker programs (C++, g++-9) in both conventions, written for these tests: every
// verdict a checker can give, partial scores, a checker that fails, one (in C) that does
// not compile and is billed as a program that does not compile; each built once per
// request (and once for all on a runner), run in a stage of its own and not billed
// apart; a Polygon-style checker that includes testlib.h; and a problem package in the
// Kattis layout with a testlib checker, uploaded and judged.

const PY = 'python-3.9.7';
const GXX = 'g++-9';
const GCC = 'gcc-9';

describe('judged runs (checker programs)', function () {
  let s: ResultsStack;
  const stages: SandboxSpec[] = [];
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9', 'gcc']);
    s = await resultsStack('judge_programs');
    await s.startRunner({ sandbox: await recordingSandbox(stages) });
  });
  after(async () => s?.close());

  const sync = (key: string, body: object) => syncRun(s, key, body);
  const sumTests = ['10 ok', '10 off', '10 wrong', '10 pe'].map((input) => ({ input, expected_output: '9 1' }));

  it('testlib: accepted, partial (points), wrong answer, presentation error; built once, run after each test, not billed', async () => {
    const { accountId, key } = await keyFor(s.db);
    stages.length = 0;
    const checker = { type: 'program', compiler: GXX, code: TESTLIB_CHECKER, convention: 'testlib' };
    const r = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, checker, tests: sumTests });
    expect(r.tests!.map((t) => [t.verdict, t.score, t.checker_message])).to.deep.equal([
      ['accepted', 1, 'ok 9 + 1 = 10'],
      ['partial', 0.5, 'points 0.5 off by one'],
      ['wrong_answer', 0, 'wrong answer 100 + 1 is not 10'],
      ['presentation_error', 0, 'presentation error expected two integers'],
    ]);
    expect(r).to.include({ verdict: 'partial', score: 0.375 });
    // One compile (the checker's), four runs of the program, four of the checker in stages of their own.
    expect(stages.filter((st) => st.collect && st.argv.some((a) => a.includes('g++')))).to.have.length(1);
    const checks = stages.filter((st) => st.argv.includes('/box/judge-answer'));
    expect(checks).to.have.length(4);
    expect(checks[0]!.files!.map((f) => f.name)).to.include.members(['judge-input', 'judge-output', 'judge-answer']);
    expect(await billedSubmissions(s, accountId)).to.equal(4);
    // The same checker again: found built, not compiled a second time.
    stages.length = 0;
    await sync(key.key, { code: SUM_PROGRAM, compiler: PY, checker, tests: sumTests.slice(0, 1) });
    expect(stages.filter((st) => st.collect && st.argv.some((a) => a.includes('g++')))).to.have.length(0);
  });

  it("testlib's partial credit as testlib ends: quitp's points exactly (0.00000001 is not 0), quitpi's points_info no score, _pc(13) exit 13", async () => {
    const { key } = await keyFor(s.db);
    const checker = { type: 'program', compiler: GXX, code: TESTLIB_PARTIAL_CHECKER, convention: 'testlib' };
    const r = await sync(key.key, { code: 'print(5)', compiler: PY, checker, tests: ['tiny', 'info', 'pc'].map((answer) => ({ input: '', expected_output: answer })) });
    expect(r.tests!.map((t) => [t.verdict, t.score])).to.deep.equal([
      ['partial', 1e-8],
      ['checker_error', 0],
      ['partial', 0.13],
    ]);
    expect(r.tests![0]!.checker_message).to.equal('points 0.00000001 almost nothing');
    expect(r.tests![1]!.checker_message).to.match(/^the checker exited with code 7: no score .*points points_info=1\.0 answer 5 is wrong$/);
    expect(r.tests![2]!.checker_message).to.equal('partially correct (13) result=13');
  });

  it("a Kattis package's custom validator gets problem.yaml's validator_flags and its group's output_validator_flags as its arguments", async () => {
    const { key } = await keyFor(s.db);
    const zip = makeZip([
      { name: 'problem.yaml', content: 'validation: custom\nvalidator_flags: --mode strict 3\n' },
      { name: 'data/sample/1.in', content: '1\n' },
      { name: 'data/sample/1.ans', content: '1\n' },
      { name: 'data/secret/g/testdata.yaml', content: 'output_validator_flags: float_tolerance 1e-6 my_own_flag\n' },
      { name: 'data/secret/g/1.in', content: '1\n' },
      { name: 'data/secret/g/1.ans', content: '1\n' },
      { name: 'output_validators/args/validator.py', content: KATTIS_ARGUMENTS_VALIDATOR },
    ]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status, await up.clone().text()).to.equal(201);
    const problem = (await up.json()) as { id: string };
    const r = await sync(key.key, { code: 'print(1)', compiler: PY, problem: problem.id });
    // feedback_dir ends in a slash (the validator appends judgemessage.txt to it), then the flags, as Kattis passes them.
    expect(r.tests!.map((t) => [t.name, t.verdict, t.checker_message])).to.deep.equal([
      ['sample/1', 'accepted', 'args: --mode strict 3'],
      ['secret/g/1', 'accepted', 'args: --mode strict 3 float_tolerance 1e-6 my_own_flag'],
    ]);
  });

  it("a checker's own failure is checker_error: exit 3, or a crash", async () => {
    const { key } = await keyFor(s.db);
    const fails = await sync(key.key, {
      code: SUM_PROGRAM,
      compiler: PY,
      checker: { type: 'program', compiler: GXX, code: TESTLIB_CHECKER, convention: 'testlib' },
      tests: [{ input: '10 ok', expected_output: 'FAIL' }],
    });
    expect(fails.tests![0]).to.include({ verdict: 'checker_error', score: 0, checker_message: 'the checker exited with code 3: FAIL the answer file says so' });
    const crashes = await sync(key.key, {
      code: SUM_PROGRAM,
      compiler: PY,
      checker: { type: 'program', compiler: GXX, code: 'int main() { int* p = 0; return *p; }', convention: 'testlib' },
      input: '10 ok',
      expected_output: '9 1',
    });
    expect(crashes).to.include({ verdict: 'checker_error', checker_message: 'the checker was killed by signal 11' });
  });

  it('a C checker or interactor that does not compile: its compile stage is the result, billed as a program that does not compile', async () => {
    const { accountId, key } = await keyFor(s.db);
    // The yardstick: a program that does not compile, with the same four tests.
    const program = await sync(key.key, { code: 'int main( {', compiler: GCC, tests: sumTests });
    expect(program).to.include({ status: 'compile_error', verdict: 'compile_error' });
    const yardstick = await billedSubmissions(s, accountId);
    expect(yardstick).to.equal(4);
    stages.length = 0;
    const broken = { compiler: GCC, code: 'int main( {', convention: 'testlib' };
    const r = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, checker: { type: 'program', ...broken }, tests: sumTests });
    expect(r).to.include({ status: 'compile_error', verdict: 'checker_error', score: 0 });
    expect(r.checker_message).to.match(/^the checker did not compile:\n[\s\S]*error/);
    // The compiler's messages are where a compile stage's go; the stage's time is shown.
    expect(r.error).to.match(/error/);
    expect(r.compile_output).to.equal(r.error);
    expect(r.total).to.be.a('number');
    // The checker's compile stage ran, nothing after it.
    expect(stages).to.have.length(1);
    expect(await billedSubmissions(s, accountId)).to.equal(2 * yardstick);
    const i = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, interactor: broken, tests: sumTests });
    expect(i).to.include({ status: 'compile_error', verdict: 'checker_error' });
    expect(i.checker_message).to.match(/^the interactor did not compile:\n/);
    expect(await billedSubmissions(s, accountId)).to.equal(3 * yardstick);
  });

  it('a Polygon-style checker that includes testlib.h, one of its files', async () => {
    const { key } = await keyFor(s.db);
    const checker = { type: 'program', compiler: GXX, files: [{ name: 'check.cpp', content: POLYGON_CHECKER }, { name: 'testlib.h', content: TESTLIB_H }], convention: 'testlib' };
    const r = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, checker, tests: [sumTests[0], sumTests[2], sumTests[3]] });
    expect(r.tests!.map((t) => [t.verdict, t.checker_message])).to.deep.equal([
      ['accepted', 'ok the sum is 10'],
      ['wrong_answer', 'wrong answer 100 + 1 is not 10'],
      ['presentation_error', 'wrong output format expected an integer'],
    ]);
  });

  it('Kattis: the output on stdin, 42 and 43, judgemessage.txt, a partial score in score.txt', async () => {
    const { key } = await keyFor(s.db);
    const r = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, checker: { type: 'program', compiler: GXX, code: KATTIS_VALIDATOR, convention: 'kattis' }, tests: sumTests });
    expect(r.tests!.map((t) => [t.verdict, t.score, t.checker_message])).to.deep.equal([
      ['accepted', 1, 'the sum is right'],
      ['partial', 0.25, 'off by one'],
      ['wrong_answer', 0, '100 + 1 is not 10'],
      ['wrong_answer', 0, 'expected two integers'],
    ]);
  });

  it('Kattis: a checker that leaves a name that is not UTF-8 in feedback_dir still gives its verdict', async () => {
    const { accountId, key } = await keyFor(s.db);
    const validator = [
      'import os, sys',
      'feedback = sys.argv[3].encode()',
      'open(os.path.join(feedback, b"\\xff\\xfe"), "wb").write(b"junk")',
      'got = sys.stdin.read().split()',
      'ok = got == open(sys.argv[2]).read().split()',
      'open(os.path.join(feedback, b"judgemessage.txt"), "w").write("same" if ok else "differs")',
      'sys.exit(42 if ok else 43)',
    ].join('\n');
    const r = await sync(key.key, {
      code: 'print(*input().split()[::-1])',
      compiler: PY,
      checker: { type: 'program', compiler: PY, code: validator, convention: 'kattis' },
      tests: [{ input: '1 2', expected_output: '2 1' }, { input: '3 4', expected_output: '3 4' }],
    });
    expect(r.tests!.map((t) => [t.status, t.verdict, t.checker_message])).to.deep.equal([
      ['success', 'accepted', 'same'],
      ['success', 'wrong_answer', 'differs'],
    ]);
    expect(await billedSubmissions(s, accountId)).to.equal(2);
  });

  it('a Kattis-layout package with a testlib checker, uploaded and judged', async () => {
    const { key } = await keyFor(s.db);
    const zip = makeZip([
      { name: 'sum/problem.yaml', content: 'name: Two numbers\nvalidation: custom\nlimits:\n  time_limit: 2\n' },
      { name: 'sum/data/sample/1.in', content: '10 ok\n' },
      { name: 'sum/data/sample/1.ans', content: '9 1\n' },
      { name: 'sum/data/secret/1.in', content: '20 off\n' },
      { name: 'sum/data/secret/1.ans', content: '19 1\n' },
      { name: 'sum/data/secret/2.in', content: '7 ok\n' },
      { name: 'sum/data/secret/2.ans', content: '6 1\n' },
      { name: 'sum/output_validators/sum/check.cpp', content: POLYGON_CHECKER },
      { name: 'sum/output_validators/sum/testlib.h', content: TESTLIB_H },
    ]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status, await up.clone().text()).to.equal(201);
    const problem = (await up.json()) as { id: string; checker: { convention: string } };
    expect(problem.checker.convention).to.equal('testlib');
    const r = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, problem: problem.id });
    expect(r.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['sample/1', 'accepted'], ['secret/1', 'wrong_answer'], ['secret/2', 'accepted']]);
    expect(r).to.deep.include({ verdict: 'wrong_answer', problem: { id: problem.id, version: 1 } });
  });
  it("a package whose validator is validate.cc with validate.h (DOMjudge's boolfind layout) is built by the newest g++ offered; a Python submission with a syntax error is compile_error, no test run", async () => {
    const { key } = await keyFor(s.db);
    const zip = makeZip([
      { name: 'sum/problem.yaml', content: 'name: Two numbers\nvalidation: custom\n' },
      { name: 'sum/domjudge-problem.ini', content: "timelimit='2'\n" },
      { name: 'sum/data/secret/1.in', content: '10 ok\n' },
      { name: 'sum/data/secret/1.ans', content: '9 1\n' },
      { name: 'sum/data/secret/2.in', content: '20 off\n' },
      { name: 'sum/data/secret/2.ans', content: '19 1\n' },
      { name: 'sum/output_validators/sum_run/validate.cc', content: `#include "validate.h"\n${KATTIS_VALIDATOR}` },
      { name: 'sum/output_validators/sum_run/validate.h', content: '#include <cstdlib>\n' },
    ]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status, await up.clone().text()).to.equal(201);
    const problem = (await up.json()) as { id: string; checker: { compiler: string; convention: string; files: string[] } };
    // The newest g++ this host offers (g++-9 with the gcc image alone).
    expect(problem.checker).to.deep.include({ convention: 'kattis', files: ['validate.cc', 'validate.h'] });
    expect(problem.checker.compiler).to.match(/^g\+\+-/);
    const r = await sync(key.key, { code: SUM_PROGRAM, compiler: PY, problem: problem.id });
    expect(r.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['secret/1', 'accepted'], ['secret/2', 'partial']]);
    const broken = await sync(key.key, { code: 'print(1\n', compiler: PY, problem: problem.id });
    expect(broken).to.include({ status: 'compile_error', verdict: 'compile_error', score: 0 });
    expect(broken.compile_output).to.match(/SyntaxError/);
    expect(broken).to.not.have.property('tests');
  });

  it("a stored problem's checker directory with a file named -B.c: compiled as a file, never gcc's -B; the .c/specs beside it runs nothing", async () => {
    const { key } = await keyFor(s.db);
    const validator = '#include <stdio.h>\nint main(int argc, char **argv) {\n  long want, got;\n  FILE *ans = fopen(argv[2], "r");\n  if (!ans || fscanf(ans, "%ld", &want) != 1) return 1;\n  return scanf("%ld", &got) == 1 && got == want ? 42 : 43;\n}\n';
    const { 'main.c': _main, ...attack } = SPECS_ATTACK;
    const zip = makeZip([
      { name: 'twice/problem.yaml', content: 'name: Twice\nvalidation: custom\n' },
      { name: 'twice/data/secret/1.in', content: '21\n' },
      { name: 'twice/data/secret/1.ans', content: '42\n' },
      { name: 'twice/output_validators/check/validator.c', content: validator },
      ...Object.entries(attack).map(([name, content]) => ({ name: `twice/output_validators/check/${name}`, content })),
    ]);
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key.key, 'Content-Type': 'application/zip' }, body: new Uint8Array(zip) });
    expect(up.status, await up.clone().text()).to.equal(201);
    const problem = (await up.json()) as { id: string };
    const r = await sync(key.key, { code: 'print(2 * int(input()))', compiler: PY, problem: problem.id });
    expect(r.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['secret/1', 'accepted']]);
    expect(JSON.stringify(r)).to.not.include('PWNED');
  });
});
