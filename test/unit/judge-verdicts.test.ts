import { expect } from 'chai';
import { checkerArguments, conventionVerdict, interactorArguments, testlibPoints, wholeNumber, type ConventionOutcome } from '../../src/judge/conventions.js';
import { checkerMessage, interactiveVerdict, overallVerdict, RESULT_VERDICTS, SKIPPED, testVerdict } from '../../src/judge/verdict.js';
import { judge0StatusOfVerdict, VERDICT_NAMES } from '../../src/compat/judge0/statuses.js';
import { firstLineDiff } from '../../src/judge/diff.js';

// Verdicts computed in one place: a test's from its run and its comparison, the
// request's from its tests', and what a testlib or Kattis checker's end means.

const exited = (exitCode: number, stderr = '', feedback: Record<string, string> = {}): ConventionOutcome => ({
  how: 'exited',
  exitCode,
  signal: null,
  stderr: Buffer.from(stderr),
  feedback: Object.fromEntries(Object.entries(feedback).map(([k, v]) => [k, Buffer.from(v)])),
});

describe('judge: verdicts', () => {
  it('a run that did not succeed keeps its status as its verdict and is not compared', () => {
    for (const status of ['timeout', 'memory_limit', 'runtime_error', 'output_limit', 'process_limit'] as const) {
      expect(testVerdict(status, null)).to.deep.equal({ verdict: status, score: 0, checker_message: null });
    }
    expect(() => testVerdict('success', null)).to.throw();
  });

  it("a successful run takes the comparison's verdict, score and message (at most 4 KB, whole characters)", () => {
    expect(testVerdict('success', { verdict: 'accepted', score: 1, message: '' })).to.deep.equal({ verdict: 'accepted', score: 1, checker_message: null });
    expect(testVerdict('success', { verdict: 'partial', score: 2 / 3, message: 'two of three\n' })).to.deep.equal({ verdict: 'partial', score: 2 / 3, checker_message: 'two of three' });
    // Exactly as the checker gave it: not rounded to 0.
    expect(testVerdict('success', { verdict: 'partial', score: 1e-8, message: 'points 0.00000001' })).to.include({ verdict: 'partial', score: 1e-8 });
    const long = checkerMessage('é'.repeat(3000))!;
    expect(Buffer.byteLength(long)).to.equal(4096);
    expect(checkerMessage('ab\u0000')).to.equal('ab\uFFFD');
  });

  it('the request: the first test not accepted, and the weighted score as a fraction', () => {
    const ac = { verdict: 'accepted' as const, score: 1, checker_message: null };
    const wa = { verdict: 'wrong_answer' as const, score: 0, checker_message: 'x' };
    expect(overallVerdict([ac, ac])).to.deep.equal({ verdict: 'accepted', score: 1 });
    expect(overallVerdict([ac, wa, { ...SKIPPED }])).to.deep.equal({ verdict: 'wrong_answer', score: 1 / 3 });
    expect(overallVerdict([{ verdict: 'partial', score: 1e-8, checker_message: null }])).to.deep.equal({ verdict: 'partial', score: 1e-8 });
    expect(overallVerdict([{ ...ac, weight: 3 }, { ...wa, weight: 1 }])).to.deep.equal({ verdict: 'wrong_answer', score: 0.75 });
    expect(overallVerdict([{ ...ac, weight: 0 }, { ...ac, weight: 0 }])).to.deep.equal({ verdict: 'accepted', score: 0 });
    expect(overallVerdict([{ verdict: 'partial', score: 0.5, checker_message: null }, ac])).to.deep.equal({ verdict: 'partial', score: 0.75 });
  });

  it('interactive, as problemtools: a failed interactor, or one that rejected and ended first, wins; then the limit, the runtime error, the word', () => {
    const wa = { verdict: 'wrong_answer' as const, score: 0, message: 'guessed 7 times too many' };
    const ok = { verdict: 'accepted' as const, score: 1, message: 'found in 10 guesses' };
    const fail = { verdict: 'checker_error' as const, score: 0, message: 'the interactor exited with code 3' };
    // A failed interactor wins, whoever ended first.
    for (const first of [true, false]) {
      expect(interactiveVerdict('timeout', fail, first).verdict).to.equal('checker_error');
      expect(interactiveVerdict('runtime_error', fail, first).verdict).to.equal('checker_error');
    }
    // The interactor rejected and ended first: its verdict, whatever the program then did.
    expect(interactiveVerdict('timeout', wa, true)).to.deep.equal({ verdict: 'wrong_answer', score: 0, checker_message: 'guessed 7 times too many' });
    expect(interactiveVerdict('runtime_error', wa, true).verdict).to.equal('wrong_answer');
    expect(interactiveVerdict('memory_limit', wa, true).verdict).to.equal('wrong_answer');
    // The program ended first: its limit, then its runtime error, then the interactor's word.
    expect(interactiveVerdict('timeout', wa, false)).to.deep.equal({ verdict: 'timeout', score: 0, checker_message: 'guessed 7 times too many' });
    expect(interactiveVerdict('runtime_error', wa, false).verdict).to.equal('runtime_error');
    expect(interactiveVerdict('success', wa, false).verdict).to.equal('wrong_answer');
    // An interactor that accepted first does not cover for the program's crash after.
    expect(interactiveVerdict('runtime_error', ok, true)).to.deep.equal({ verdict: 'runtime_error', score: 0, checker_message: 'found in 10 guesses' });
    expect(interactiveVerdict('timeout', ok, true).verdict).to.equal('timeout');
    expect(interactiveVerdict('success', ok, false)).to.deep.equal({ verdict: 'accepted', score: 1, checker_message: 'found in 10 guesses' });
  });
});

describe('judge: checker conventions', () => {
  it('testlib: input output answer; Kattis: input answer feedback_dir (ending in a slash, as Kattis gives it) with the output on stdin', () => {
    expect(checkerArguments('testlib')).to.deep.equal({ args: ['/box/judge-input', '/box/judge-output', '/box/judge-answer'], outputOnStdin: false });
    expect(checkerArguments('kattis')).to.deep.equal({ args: ['/box/judge-input', '/box/judge-answer', '/box/judge-feedback/'], outputOnStdin: true });
    expect(interactorArguments('testlib')).to.deep.equal(['/box/judge-input', '/box/judge-interactor-output']);
    expect(interactorArguments('kattis')).to.deep.equal(['/box/judge-input', '/box/judge-answer', '/box/judge-feedback/']);
  });

  it('testlib exit codes: 0 ok, 1 wrong answer, 2 presentation error, 3 failure, 7 points', () => {
    expect(conventionVerdict('testlib', exited(0, 'ok 3 numbers\n'))).to.deep.equal({ verdict: 'accepted', score: 1, message: 'ok 3 numbers' });
    expect(conventionVerdict('testlib', exited(1, "wrong answer 2nd numbers differ - expected: '5', found: '6'"))).to.include({ verdict: 'wrong_answer', score: 0 });
    expect(conventionVerdict('testlib', exited(2, 'presentation error extra spaces'))).to.include({ verdict: 'presentation_error' });
    expect(conventionVerdict('testlib', exited(3, 'FAIL answer file is broken'))).to.deep.equal({ verdict: 'checker_error', score: 0, message: 'the checker exited with code 3: FAIL answer file is broken' });
    expect(conventionVerdict('testlib', exited(7, 'points 0.25 one of four'))).to.deep.equal({ verdict: 'partial', score: 0.25, message: 'points 0.25 one of four' });
    expect(conventionVerdict('testlib', exited(7, '1 all four'))).to.include({ verdict: 'accepted', score: 1 });
    expect(conventionVerdict('testlib', exited(7, 'points 0'))).to.include({ verdict: 'wrong_answer', score: 0 });
    expect(conventionVerdict('testlib', exited(7, 'points 40 of 100 (Polygon points are clamped)'))).to.include({ verdict: 'accepted', score: 1 });
    expect(conventionVerdict('testlib', exited(7, 'no number here')).verdict).to.equal('checker_error');
    expect(conventionVerdict('testlib', exited(5, 'huh')).message).to.equal('the checker exited with code 5: huh');
  });

  it('a checker that crashed or hit a limit failed', () => {
    expect(conventionVerdict('testlib', { ...exited(0), how: 'signaled', exitCode: 139, signal: 11 }).message).to.equal('the checker was killed by signal 11');
    expect(conventionVerdict('kattis', { ...exited(0), how: 'timeout', exitCode: 137 }, 'interactor').message).to.equal('the interactor was stopped: timeout');
  });

  it('Kattis: 42 accepted, 43 wrong answer, judgemessage.txt as the message, score.txt as a partial score', () => {
    expect(conventionVerdict('kattis', exited(42, '', { 'judgemessage.txt': 'fine\n' }))).to.deep.equal({ verdict: 'accepted', score: 1, message: 'fine' });
    expect(conventionVerdict('kattis', exited(43, 'stderr words', { 'judgemessage.txt': 'line 2 is wrong' }))).to.deep.equal({ verdict: 'wrong_answer', score: 0, message: 'line 2 is wrong' });
    expect(conventionVerdict('kattis', exited(43, 'only stderr'))).to.include({ message: 'only stderr' });
    expect(conventionVerdict('kattis', exited(42, '', { 'score.txt': '0.4\n' }))).to.include({ verdict: 'partial', score: 0.4 });
    expect(conventionVerdict('kattis', exited(42, '', { 'score.txt': 'lots' })).verdict).to.equal('checker_error');
    expect(conventionVerdict('kattis', exited(0)).message).to.equal('the checker exited with code 0');
  });

  it("testlib's points are the first word after \"points\", exactly as written (quitp's %.10f trimmed, or %d)", () => {
    expect(conventionVerdict('testlib', exited(7, 'points 0.00000001 almost nothing\n'))).to.deep.equal({ verdict: 'partial', score: 1e-8, message: 'points 0.00000001 almost nothing' });
    expect(conventionVerdict('testlib', exited(7, 'points 0.6666666667'))).to.include({ verdict: 'partial', score: 0.6666666667 });
    expect(testlibPoints('points 1e-1 x')).to.equal(0.1);
    expect(testlibPoints('points .5')).to.equal(0.5);
    // A number later in the message is not the score.
    expect(testlibPoints('points many, 3 of 4')).to.equal(null);
    expect(conventionVerdict('testlib', exited(7, 'points ok 1 of 2')).verdict).to.equal('checker_error');
  });

  it("testlib's quitpi (exit 7, points_info=… and no score) is no score: not the first number of its message", () => {
    // quitpi("1.0", "answer 5 is wrong") writes this; the 1.0 is information, not points.
    const info = conventionVerdict('testlib', exited(7, 'points points_info=1.0 answer 5 is wrong'));
    expect(info.verdict).to.equal('checker_error');
    expect(info.message).to.match(/points_info/);
    expect(conventionVerdict('testlib', exited(7, 'points points_info=0.5')).verdict).to.equal('checker_error');
  });

  it("testlib's _pc(n): exit n (or 50 + n, testsys) with \"partially correct (n)\": n percent of the test", () => {
    expect(conventionVerdict('testlib', exited(13, 'partially correct (13) result=13'))).to.deep.equal({ verdict: 'partial', score: 0.13, message: 'partially correct (13) result=13' });
    expect(conventionVerdict('testlib', exited(63, 'partially correct (13) result=13'))).to.include({ verdict: 'partial', score: 0.13 });
    expect(conventionVerdict('testlib', exited(1, 'partially correct (1) close'))).to.include({ verdict: 'partial', score: 0.01 });
    expect(conventionVerdict('testlib', exited(7, 'partially correct (7) x'))).to.include({ verdict: 'partial', score: 0.07 });
    expect(conventionVerdict('testlib', exited(0, 'partially correct (0) nothing'))).to.include({ verdict: 'wrong_answer', score: 0 });
    expect(conventionVerdict('testlib', exited(100, 'partially correct (100) all'))).to.include({ verdict: 'accepted', score: 1 });
    // The message must agree with the exit code; a plain code 13 is still unknown.
    expect(conventionVerdict('testlib', exited(13, 'partially correct (12)')).verdict).to.equal('checker_error');
    expect(conventionVerdict('testlib', exited(13, 'whatever')).verdict).to.equal('checker_error');
    // 1 without the message is a wrong answer, as always.
    expect(conventionVerdict('testlib', exited(1, 'wrong answer (1) differs')).verdict).to.equal('wrong_answer');
  });

  it("testlib's unexpected end of file (exit 8, built with ENABLE_UNEXPECTED_EOF) is a presentation error", () => {
    expect(conventionVerdict('testlib', exited(8, 'unexpected eof Unexpected end of file - int32 expected'))).to.include({ verdict: 'presentation_error', score: 0 });
  });

  it("Kattis' score.txt is one number, whole (as problemtools' float() reads it), not the first number in it", () => {
    expect(conventionVerdict('kattis', exited(42, '', { 'score.txt': ' 0.00000001\n' }))).to.include({ verdict: 'partial', score: 1e-8 });
    expect(conventionVerdict('kattis', exited(42, '', { 'score.txt': 'score 3 of 4' })).verdict).to.equal('checker_error');
    expect(conventionVerdict('kattis', exited(42, '', { 'score.txt': '0.5 0.25' })).verdict).to.equal('checker_error');
    expect(wholeNumber('2.5e-1')).to.equal(0.25);
    expect(wholeNumber('0x10')).to.equal(null);
  });
});

describe('judge: Judge0 statuses of verdicts', () => {
  it('accepted 3, a wrong, partial or badly laid out output 4, a failed checker 13, the run statuses as Judge0 names them', () => {
    expect(Object.fromEntries(RESULT_VERDICTS.map((v) => [v, judge0StatusOfVerdict(v)]))).to.deep.equal({
      accepted: 3,
      wrong_answer: 4,
      presentation_error: 4,
      partial: 4,
      timeout: 5,
      memory_limit: 12,
      runtime_error: 11,
      output_limit: 8,
      process_limit: 12,
      checker_error: 13,
      compile_error: 6,
      internal_error: 13,
      cancelled: 13,
    });
  });
});

describe('judge: verdicts as other judges name them', () => {
  it('names every verdict (and an unjudged success) once, for Kattis, DOMjudge, testlib and Judge0', () => {
    expect(VERDICT_NAMES.map((v) => v.verdict).sort()).to.deep.equal([...RESULT_VERDICTS, 'skipped', 'success'].sort());
    const byVerdict = Object.fromEntries(VERDICT_NAMES.map((v) => [v.verdict, v]));
    expect(byVerdict['timeout']).to.include({ kattis: 'TLE', domjudge: 'timelimit', judge0: 5 });
    expect(byVerdict['runtime_error']).to.include({ kattis: 'RTE', domjudge: 'run-error', judge0: 11 });
    expect(byVerdict['wrong_answer']).to.include({ kattis: 'WA', testlib: 'wa (1)', judge0: 4 });
    expect(byVerdict['compile_error']).to.include({ domjudge: 'compiler-error', judge0: 6 });
    expect(byVerdict['output_limit']).to.include({ domjudge: 'output-limit', judge0: 8 });
  });
});

describe('judge: the first lines that differ, for a page', () => {
  it('by the lines rule, with a few lines of each from there', () => {
    expect(firstLineDiff('a\nb\nc\nd\ne\n', 'a\nB\nc\n')).to.deep.equal({ line: 2, expected: ['b', 'c', 'd'], found: ['B', 'c'] });
    expect(firstLineDiff('a \r\nb\n\n', 'a\nb')).to.equal(null);
    expect(firstLineDiff('a\n', 'a\nextra\n')).to.deep.equal({ line: 2, expected: [], found: ['extra'] });
  });
});
