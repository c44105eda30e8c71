import { expect } from 'chai';
import { keyAsker, withheld, type Shown } from '../../src/problems/feedback.js';
import type { RunResult, TestResult } from '../../src/result.js';

// The pure part of the feedback filter: which fields of a stored problem's result each
// setting lets through, the fields outside `tests` withheld unless they are a shown
// sample's, groups' verdicts and scores passed on, and who counts as restricted.

const test = (name: string, verdict: string, output: string): TestResult =>
  ({ name, status: 'success', verdict, score: verdict === 'accepted' ? 1 : 0, checker_message: verdict === 'accepted' ? null : `expected "${name}-answer"`, output, error: `${name}-err`, exit_code: 3, signal: null, time: 0.01, total: 0.02, memory: 900, limit_exceeded: null, truncated: false, files: [{ name: 'f', size: 1, mime: 'text/plain', content: 'eA==' }] }) as TestResult;

function result(tests: TestResult[]): RunResult {
  const top = tests.find((t) => t.verdict !== 'accepted') ?? tests[tests.length - 1]!;
  return {
    id: 'r',
    compiler: 'python-3.9.7',
    ...top,
    status: 'success',
    verdict: tests.some((t) => t.verdict !== 'accepted') ? 'wrong_answer' : 'accepted',
    score: 0.5,
    checker_message: top.checker_message ?? null,
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    problem: { id: 'p', version: 1 },
    extra_params: null,
    tests,
    groups: [{ name: 'secret', verdict: 'wrong_answer', score: 0, message: 'group-secret-words' }],
  } as unknown as RunResult;
}

const r = result([test('s1', 'accepted', 's1-out'), test('h1', 'wrong_answer', 'h1-out'), test('h2', 'accepted', 'h2-out')]);
const samples = [true, false, false];
const text = (x: unknown) => JSON.stringify(x);
const hidden = ['h1-out', 'h1-err', 'h1-answer', 'h2-out', 'h2-err', 'group-secret-words'];

describe('problem feedback filter', () => {
  it('full: the result unchanged', () => {
    expect(withheld(r, { feedback: 'full' })).to.equal(r);
  });

  for (const feedback of ['samples', 'first_failure', 'verdict'] as const) {
    it(`${feedback}: nothing of a hidden test, the top fields (a hidden test's) withheld, verdict and score kept`, () => {
      const w = withheld(r, { feedback, samples } as Shown);
      for (const h of hidden) expect(text(w), h).to.not.include(h);
      expect(w).to.include({ verdict: 'wrong_answer', score: 0.5, output: '', error: '', exit_code: null, time: null, memory: null, checker_message: null });
      expect(w).to.not.have.property('files');
    });
  }

  it('samples: the sample whole, the others by name, status, verdict and score', () => {
    const w = withheld(r, { feedback: 'samples', samples });
    expect(w.tests![0]).to.deep.equal(r.tests![0]);
    expect(w.tests![1]).to.include({ name: 'h1', status: 'success', verdict: 'wrong_answer', score: 0, output: '', exit_code: null, checker_message: null });
    expect(w.tests![1]).to.not.have.property('files');
    expect((w as unknown as { groups: unknown }).groups).to.deep.equal([{ name: 'secret', verdict: 'wrong_answer', score: 0 }]);
  });

  it('samples: the top fields stay when they are a sample\'s (the first failure is the sample)', () => {
    const failedSample = result([test('s1', 'wrong_answer', 's1-out'), test('h1', 'accepted', 'h1-out')]);
    const w = withheld(failedSample, { feedback: 'samples', samples: [true, false] });
    expect(w).to.include({ output: 's1-out', exit_code: 3 });
  });

  it('first_failure: only the first test not accepted, by name and verdict; verdict: no tests, no groups', () => {
    expect(withheld(r, { feedback: 'first_failure', samples }).tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['h1', 'wrong_answer']]);
    const v = withheld(r, { feedback: 'verdict', samples });
    expect(v).to.not.have.property('tests');
    expect(v).to.not.have.property('groups');
  });

  it('a compile error keeps its messages (the program\'s own); a version gone shows as no samples', () => {
    const { tests: _tests, ...rest } = r;
    const ce = { ...rest, status: 'compile_error', verdict: 'compile_error', output: '', error: 'SyntaxError', compile_output: 'SyntaxError' } as unknown as RunResult;
    expect(withheld(ce, { feedback: 'verdict', samples: [] })).to.include({ error: 'SyntaxError', compile_output: 'SyntaxError' });
    expect(text(withheld(r, { feedback: 'samples', samples: [] }))).to.not.include('s1-out');
  });

  it('restricted askers: widget keys and student keys; other API keys and marketplace callers are not', () => {
    expect(keyAsker({ accountId: '1', kind: 'widget' }).restricted).to.equal(true);
    expect(keyAsker({ accountId: '1', kind: 'api', student: true }).restricted).to.equal(true);
    expect(keyAsker({ accountId: '1', kind: 'api', student: false }).restricted).to.equal(false);
    expect(keyAsker({ accountId: '1', kind: 'marketplace' }).restricted).to.equal(false);
  });
});
