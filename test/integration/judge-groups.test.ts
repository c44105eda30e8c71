import { expect } from 'chai';
import type { RunResult } from '../../src/result.js';
import { billedSubmissions, keyFor, resultsStack, type ResultsStack, skipUnlessRealRuns, syncRun } from '../helpers/results-stack.js';
import { makeZip, type ZipEntryInput } from '../helpers/zip.js';

// Packages with test groups and scores, uploaded and judged through the API with real
// sandboxed runs: a 2025-09 package of three subtasks scored by min (CMS style) in
// test_group.yaml, and a legacy scoring package whose validator writes score.txt and
// whose subtask stops at its first failure (on_reject: break), the tests it stops not
// run and not billed. Every package is written here.

const PY = 'python-3.9.7';

/** Doubles n, except for n from 100 to 999 (wrong on subtask 2 below). */
const DOUBLER = 'n = int(input().split()[0])\nprint(0 if 100 <= n < 1000 else 2 * n)\n';

const testCase = (path: string, n: number): ZipEntryInput[] => [
  { name: `${path}.in`, content: `${n}\n` },
  { name: `${path}.ans`, content: `${2 * n}\n` },
];

/** A Kattis validator: accepted when the output is the answer, its score the input's second number. */
const SCORING_VALIDATOR = `import sys
inp, ans, feedback = sys.argv[1], sys.argv[2], sys.argv[3]
out = sys.stdin.read().split()
if out != open(ans).read().split():
    open(feedback + 'judgemessage.txt', 'w').write('wrong: ' + ' '.join(out))
    sys.exit(43)
open(feedback + 'score.txt', 'w').write(open(inp).read().split()[1])
sys.exit(42)
`;

describe('judged runs (test groups and scores)', function () {
  let s: ResultsStack;
  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    s = await resultsStack('judge_groups');
    await s.startRunner();
  });
  after(async () => s?.close());

  const upload = async (key: string, entries: ZipEntryInput[]) => {
    const up = await fetch(`${s.url}/api/v2/problems`, { method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/zip' }, body: new Uint8Array(makeZip(entries)) });
    const text = await up.text();
    expect(up.status, text).to.equal(201);
    return JSON.parse(text) as { id: string; groups: { name: string; groups: unknown[] }; package: { report: { format: string; read: string[]; ignored: { key: string; reason: string }[] } } };
  };

  it('2025-09: three subtasks by min in test_group.yaml; the result has each group beside its tests, the score at the top', async () => {
    const { key } = await keyFor(s.db);
    const problem = await upload(key.key, [
      { name: 'problem.yaml', content: 'problem_format_version: 2025-09\ntype: scoring\nname: Double\nlimits:\n  time_limit: 2\n' },
      ...testCase('data/sample/1', 3),
      { name: 'data/secret/1-small/test_group.yaml', content: 'max_score: 20\nscore_aggregation: min\n' },
      ...testCase('data/secret/1-small/a', 1),
      ...testCase('data/secret/1-small/b', 9),
      { name: 'data/secret/2-medium/test_group.yaml', content: 'max_score: 30\nscore_aggregation: min\n' },
      ...testCase('data/secret/2-medium/a', 50),
      ...testCase('data/secret/2-medium/b', 500),
      { name: 'data/secret/3-large/test_group.yaml', content: 'max_score: 50\nscore_aggregation: min\nrequire_pass: sample\n' },
      ...testCase('data/secret/3-large/a', 5000),
      ...testCase('data/secret/3-large/b', 90000),
      { name: 'problem_statement/problem.en.md', content: '# Double\n' },
    ]);
    expect(problem.package.report.format).to.equal('2025-09');
    expect(problem.package.report.read).to.include.members(['data/secret/2-medium/test_group.yaml: score_aggregation', 'problem.yaml: limits.time_limit']);
    expect(problem.package.report.read).to.include('problem_statement/problem.en.md');
    expect(problem.package.report.ignored.map((i) => i.key)).to.not.include('problem_statement/');
    expect(problem.groups.groups).to.have.length(2);

    const r = await syncRun(s, key.key, { code: DOUBLER, compiler: PY, problem: problem.id });
    expect(r.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([
      ['sample/1', 'accepted'],
      ['secret/1-small/a', 'accepted'],
      ['secret/1-small/b', 'accepted'],
      ['secret/2-medium/a', 'accepted'],
      ['secret/2-medium/b', 'wrong_answer'],
      ['secret/3-large/a', 'accepted'],
      ['secret/3-large/b', 'accepted'],
    ]);
    expect(r).to.include({ verdict: 'partial', points: 70, max_points: 100, score: 0.7 });
    // In the result's field order: points and max_points after score, groups just before tests.
    const keys = Object.keys(r);
    expect(keys.slice(keys.indexOf('score'), keys.indexOf('score') + 3)).to.deep.equal(['score', 'points', 'max_points']);
    expect(keys.slice(-2)).to.deep.equal(['groups', 'tests']);
    expect(r.groups!.map((g) => [g.name, g.verdict, g.score, g.max_score])).to.deep.equal([
      ['sample', 'accepted', null, null],
      ['secret', 'wrong_answer', 70, 100],
      ['secret/1-small', 'accepted', 20, 20],
      ['secret/2-medium', 'wrong_answer', 0, 30],
      ['secret/3-large', 'accepted', 50, 50],
    ]);
    expect(r.groups![3]!.tests).to.deep.equal(['secret/2-medium/a', 'secret/2-medium/b']);
    expect(r.tests!.map((t) => t.points ?? null)).to.deep.equal([null, 20, 20, 30, 0, 50, 50]);

    // A wrong sample: the large subtask requires it, so its tests are not run and it scores 0.
    const wrongSample = await syncRun(s, key.key, { code: 'n = int(input().split()[0])\nprint(0 if n == 3 else 2 * n)\n', compiler: PY, problem: problem.id });
    expect(wrongSample.tests!.slice(-2).map((t) => t.status)).to.deep.equal(['skipped', 'skipped']);
    expect(wrongSample).to.include({ points: 50 });
    expect(wrongSample.groups!.find((g) => g.name === 'secret/3-large')!.message).to.match(/require_pass sample/);
  });

  it("legacy: a validator's score.txt, on_reject: break stopping a subtask (its rest not run, not billed), oddecho's flags", async () => {
    const { accountId, key } = await keyFor(s.db);
    const input = (path: string, n: number, points: number): ZipEntryInput[] => [
      { name: `${path}.in`, content: `${n} ${points}\n` },
      { name: `${path}.ans`, content: `${2 * n}\n` },
    ];
    const problem = await upload(key.key, [
      { name: 'p/problem.yaml', content: 'type: scoring\nvalidation: custom score\nname: Scored\n' },
      { name: 'p/data/testdata.yaml', content: 'on_reject: continue\nrange: 0 100\ngrader_flags: ignore_sample\n' },
      { name: 'p/data/sample/testdata.yaml', content: 'accept_score: 0\nrange: 0 0\ngrader_flags: first_error\n' },
      ...input('p/data/sample/1', 3, 0),
      { name: 'p/data/secret/testdata.yaml', content: 'grader_flags: first_error accept_if_any_accepted\n' },
      { name: 'p/data/secret/g1/testdata.yaml', content: 'on_reject: break\nrange: 0 40\ngrader_flags: min\n' },
      ...input('p/data/secret/g1/1', 4, 40),
      ...input('p/data/secret/g1/2', 7, 40),
      { name: 'p/data/secret/g2/testdata.yaml', content: 'on_reject: break\nrange: 0 60\ngrader_flags: min\n' },
      ...input('p/data/secret/g2/1', 200, 60),
      // A link reusing g1's first test, as oddecho does.
      { name: 'p/data/secret/g2/2.in', content: '../g1/1.in', mode: 0o120777 },
      { name: 'p/data/secret/g2/2.ans', content: '../g1/1.ans', mode: 0o120777 },
      { name: 'p/output_validators/score/validator.py', content: SCORING_VALIDATOR },
    ]);
    expect(problem.package.report.format).to.equal('legacy');
    const before = await billedSubmissions(s, accountId);
    const r: RunResult = await syncRun(s, key.key, { code: DOUBLER, compiler: PY, problem: problem.id });
    expect(r.tests!.map((t) => [t.name, t.verdict, t.status])).to.deep.equal([
      ['sample/1', 'accepted', 'success'],
      ['secret/g1/1', 'accepted', 'success'],
      ['secret/g1/2', 'accepted', 'success'],
      ['secret/g2/1', 'wrong_answer', 'success'],
      ['secret/g2/2', 'skipped', 'skipped'],
    ]);
    // g1: min(40, 40); g2: min(0) after its break; secret: accepted as one group was, 40 + 0.
    expect(r).to.include({ verdict: 'partial', points: 40, max_points: 100, score: 0.4 });
    expect(r.groups!.map((g) => [g.name, g.verdict, g.score])).to.deep.equal([
      ['', 'partial', 40],
      ['sample', 'accepted', 0],
      ['secret', 'partial', 40],
      ['secret/g1', 'accepted', 40],
      ['secret/g2', 'wrong_answer', 0],
    ]);
    expect(r.tests![3]!.checker_message).to.equal('wrong: 0');
    // Four tests ran and were billed; the one on_reject stopped was not.
    expect((await billedSubmissions(s, accountId)) - before).to.equal(4);
  });

  it("legacy grading: custom: the package's grader (graders/) runs sandboxed on each group's VERDICT score lines with its flags", async () => {
    const { key } = await keyFor(s.db);
    // Doubles the sum when given the flag double; accepted when every item was.
    const grader = `import sys
items = [line.split() for line in sys.stdin.read().splitlines() if line.strip()]
score = sum(float(s) for _, s in items) * (2 if 'double' in sys.argv[1:] else 1)
print('%s %f' % ('AC' if all(v == 'AC' for v, _ in items) else 'WA', score))
`;
    const problem = await upload(key.key, [
      { name: 'problem.yaml', content: 'type: scoring\nname: Graded\n' },
      { name: 'data/testdata.yaml', content: 'on_reject: continue\n' },
      { name: 'data/secret/testdata.yaml', content: 'grading: custom\ngrader_flags: double\naccept_score: 5\n' },
      ...testCase('data/secret/1', 1),
      ...testCase('data/secret/2', 2),
      ...testCase('data/secret/3', 300),
      { name: 'graders/grader.py', content: grader },
    ]);
    expect(problem.package.report.read).to.include('graders/');
    const r = await syncRun(s, key.key, { code: DOUBLER, compiler: PY, problem: problem.id });
    expect(r.tests!.map((t) => t.verdict)).to.deep.equal(['accepted', 'accepted', 'wrong_answer']);
    // secret: (5 + 5 + 0) x 2 = 20, WA; data/ (default grader, sum) keeps it.
    expect(r.groups!.map((g) => [g.name, g.verdict, g.score])).to.deep.equal([
      ['', 'wrong_answer', 20],
      ['secret', 'wrong_answer', 20],
    ]);
    expect(r).to.include({ points: 20 });
  });
});
