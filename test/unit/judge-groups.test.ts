import { expect } from 'chai';
import { defaultGrader, graderAnswer, gradeTree, skipsTest, type GradedTest, type GroupNode, type GroupTree, type LegacyRules, type ModernRules } from '../../src/judge/groups.js';

// Test groups' verdicts and scores from their tests', as the package's own judge gives
// them: problemtools' default grader and its walk of the tree (legacy, 2023-07-draft),
// and the 2025-09 spec's result aggregation, with the judge errors it lists.

const legacy = (over: Partial<LegacyRules> = {}): LegacyRules => ({ on_reject: 'break', on_reject_stated: false, grading: 'default', grader_flags: [], accept_score: 1, reject_score: 0, range: [null, null], ...over });
const modern = (over: Partial<ModernRules> = {}): ModernRules => ({ max_score: null, score_aggregation: 'pass-fail', require_pass: [], ...over });
const ac: GradedTest = { verdict: 'accepted' };
const wa: GradedTest = { verdict: 'wrong_answer' };
const tle: GradedTest = { verdict: 'timeout' };
const je: GradedTest = { verdict: 'checker_error' };
const names = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);
const tests = (...indices: number[]) => indices.map((test) => ({ test }));

/** oddecho's tree (problemtools' example): samples of score 0, two subtasks of 50 by min, accept_if_any_accepted. */
function oddecho(): GroupTree {
  const sub = (name: string, first: number): GroupNode => ({ name, legacy: legacy({ on_reject: 'break', on_reject_stated: true, accept_score: 50, range: [0, 50], grader_flags: ['min'] }), items: tests(first, first + 1, first + 2) });
  return {
    format: 'legacy',
    scoring: true,
    root: {
      name: '',
      legacy: legacy({ on_reject: 'continue', on_reject_stated: true, range: [0, 100], grader_flags: ['ignore_sample'] }),
      items: [
        { group: { name: 'sample', legacy: legacy({ on_reject: 'continue', on_reject_stated: true, accept_score: 0, range: [0, 0], grader_flags: ['first_error'] }), items: tests(0, 1) } },
        {
          group: {
            name: 'secret',
            legacy: legacy({ on_reject: 'continue', on_reject_stated: true, range: [0, 100], grader_flags: ['first_error', 'accept_if_any_accepted'] }),
            items: [{ group: sub('secret/subtask1', 2) }, { group: sub('secret/subtask2', 5) }],
          },
        },
      ],
    },
  };
}

describe('judge: test groups', () => {
  describe("problemtools' default grader", () => {
    const r = (verdict: 'AC' | 'WA' | 'TLE' | 'RTE' | 'JE' | 'MLE' | 'OLE' | 'PE', score = 0) => ({ verdict, score });

    it('worst_error by default: JE, RTE, MLE, TLE, OLE, WA, PE, AC; the scores summed', () => {
      expect(defaultGrader([r('WA', 1), r('TLE', 2), r('AC', 3)], [])).to.deep.equal({ verdict: 'TLE', score: 6 });
      expect(defaultGrader([r('OLE'), r('MLE'), r('WA')], ['worst_error'])).to.deep.equal({ verdict: 'MLE', score: 0 });
      expect(defaultGrader([r('RTE'), r('JE')], ['no_errors'])).to.deep.equal({ verdict: 'JE', score: 0 });
      expect(defaultGrader([r('AC', 1), r('AC', 1)], [])).to.deep.equal({ verdict: 'AC', score: 2 });
    });

    it('first_error, always_accept, accept_if_any_accepted', () => {
      expect(defaultGrader([r('AC'), r('WA'), r('TLE')], ['first_error']).verdict).to.equal('WA');
      expect(defaultGrader([r('WA'), r('TLE')], ['always_accept']).verdict).to.equal('AC');
      expect(defaultGrader([r('WA'), r('AC')], ['first_error', 'accept_if_any_accepted']).verdict).to.equal('AC');
      expect(defaultGrader([r('WA'), r('TLE')], ['accept_if_any_accepted']).verdict).to.equal('TLE');
    });

    it('sum, avg, min, max; the last flag of a kind wins; the score as %f prints it', () => {
      const items = [r('AC', 10), r('AC', 20), r('AC', 40)];
      expect(defaultGrader(items, ['sum']).score).to.equal(70);
      expect(defaultGrader(items, ['avg']).score).to.equal(23.333333);
      expect(defaultGrader(items, ['min']).score).to.equal(10);
      expect(defaultGrader(items, ['max']).score).to.equal(40);
      expect(defaultGrader(items, ['min', 'max']).score).to.equal(40);
      expect(defaultGrader([r('AC', 1 / 3)], []).score).to.equal(0.333333);
    });

    it('ignore_sample keeps the last of (sample, secret); three items are a judge error, as the grader asserts', () => {
      expect(defaultGrader([r('WA', 5), r('AC', 7)], ['ignore_sample'])).to.deep.equal({ verdict: 'AC', score: 7 });
      expect(defaultGrader([r('AC', 7)], ['ignore_sample'])).to.deep.equal({ verdict: 'AC', score: 7 });
      expect(defaultGrader([r('AC'), r('AC'), r('AC')], ['ignore_sample'])).to.deep.equal({ verdict: 'JE', score: 0 });
    });

    it('no items: AC with 0', () => {
      expect(defaultGrader([], ['min'])).to.deep.equal({ verdict: 'AC', score: 0 });
    });
  });

  describe('legacy trees (testdata.yaml)', () => {
    it("oddecho: a solution of subtask 1 only scores 50, accepted by accept_if_any_accepted (partial below range's 100)", () => {
      const tree = oddecho();
      const results = [ac, ac, ac, ac, ac, ac, wa, ac];
      const out = gradeTree(tree, results, names(8));
      expect(out.points).to.equal(50);
      expect(out.max_points).to.equal(100);
      expect(out.verdict).to.equal('partial');
      const byName = Object.fromEntries(out.groups.map((g) => [g.name, g]));
      expect(byName['secret/subtask1']).to.include({ verdict: 'accepted', score: 50 });
      // on_reject: break at 6's WA: 7 is not counted; min of [0] is 0.
      expect(byName['secret/subtask2']).to.include({ verdict: 'wrong_answer', score: 0 });
      expect(byName['secret']).to.include({ verdict: 'partial', score: 50 });
      expect(byName['sample']).to.include({ verdict: 'accepted', score: 0 });
      expect(out.testPoints).to.deep.equal([0, 0, 50, 50, 50, 50, 0, null]);
      // on_reject: break was said: test 7 is not run once 6 failed; nothing else is skipped.
      expect(skipsTest(tree, results, 7)).to.equal(true);
      expect(results.map((_, i) => skipsTest(tree, results, i)).filter(Boolean)).to.have.length(1);
    });

    it('oddecho: everything accepted is 100, accepted; a failed sample costs nothing (ignore_sample)', () => {
      const all = gradeTree(oddecho(), Array(8).fill(ac), names(8));
      expect(all).to.include({ verdict: 'accepted', points: 100 });
      const sampleWrong = gradeTree(oddecho(), [wa, ac, ac, ac, ac, ac, ac, ac], names(8));
      expect(sampleWrong).to.include({ verdict: 'accepted', points: 100 });
      const none = gradeTree(oddecho(), [ac, ac, wa, ac, ac, tle, ac, ac], names(8));
      expect(none.points).to.equal(0);
      // first_error over [WA, TLE] at secret, root keeps secret's.
      expect(none.verdict).to.equal('wrong_answer');
    });

    it("a test's validator score (score.txt) replaces accept_score; accepted with 0 still counts as accepted", () => {
      const tree: GroupTree = { format: 'legacy', scoring: true, root: { name: '', legacy: legacy({ on_reject: 'continue' }), items: tests(0, 1, 2) } };
      const out = gradeTree(tree, [{ verdict: 'accepted', feedback: { accepted: true, score: '2.5' } }, { verdict: 'wrong_answer', feedback: { accepted: true, score: '0' } }, ac], names(3));
      expect(out.points).to.equal(3.5);
      expect(out.verdict).to.equal('accepted');
      expect(out.testPoints).to.deep.equal([2.5, 0, 1]);
    });

    it('reject_score counts for a failed test; a judge error in a group is the group verdict', () => {
      const tree: GroupTree = { format: 'legacy', scoring: true, root: { name: '', legacy: legacy({ on_reject: 'continue', reject_score: -1 }), items: tests(0, 1) } };
      expect(gradeTree(tree, [ac, wa], names(2))).to.include({ points: 0, verdict: 'wrong_answer' });
      expect(gradeTree(tree, [je, ac], names(2)).verdict).to.equal('checker_error');
    });

    it("on_reject: break grades only up to the first failure, as problemtools does, even when later tests ran (the package did not say it, so they run)", () => {
      const tree: GroupTree = { format: 'legacy', scoring: false, root: { name: '', legacy: legacy(), items: tests(0, 1, 2) } };
      const results = [ac, wa, tle];
      expect(gradeTree(tree, results, names(3))).to.include({ verdict: 'wrong_answer', points: null });
      expect(skipsTest(tree, results, 2)).to.equal(false);
      const stated: GroupTree = { ...tree, root: { ...tree.root, legacy: legacy({ on_reject_stated: true }) } };
      expect(skipsTest(stated, results, 2)).to.equal(true);
      // continue: every item is graded: worst_error of [AC, WA, TLE] is TLE.
      const cont: GroupTree = { ...tree, root: { ...tree.root, legacy: legacy({ on_reject: 'continue' }) } };
      expect(gradeTree(cont, results, names(3)).verdict).to.equal('timeout');
    });

    it("grading: custom asks the grader with its items' VERDICT score lines and its flags; an unanswered grader is a judge error", () => {
      const tree: GroupTree = {
        format: 'legacy',
        scoring: true,
        root: { name: '', legacy: legacy({ on_reject: 'continue' }), items: [{ group: { name: 'g', legacy: legacy({ on_reject: 'continue', grading: 'custom', grader_flags: ['double'], accept_score: 5 }), items: tests(0, 1) } }] },
      };
      const asked: [string, readonly string[]][] = [];
      const out = gradeTree(tree, [ac, wa], names(2), (input, flags) => {
        asked.push([input, flags]);
        return { verdict: 'AC', score: 42 };
      });
      expect(asked).to.deep.equal([['AC 5\nWA 0\n', ['double']]]);
      expect(out.groups.find((g) => g.name === 'g')).to.include({ verdict: 'accepted', score: 42 });
      expect(out.points).to.equal(42);
      expect(gradeTree(tree, [ac, wa], names(2), () => null).verdict).to.equal('checker_error');
      expect(gradeTree(tree, [ac, wa], names(2)).verdict).to.equal('checker_error');
    });

    it("a grader's output as problemtools takes it: one VERDICT score line, else a judge error", () => {
      expect(graderAnswer('AC 12.5\n')).to.deep.equal({ verdict: 'AC', score: 12.5 });
      expect(graderAnswer('WA -1')).to.deep.equal({ verdict: 'WA', score: -1 });
      for (const bad of ['', 'OK 1', 'AC', 'AC 1 2', 'AC 1\nAC 2', 'AC x']) expect(graderAnswer(bad), bad).to.deep.equal({ verdict: 'JE', score: 0 });
    });

    it('a group not reached under on_reject: break says so', () => {
      const tree: GroupTree = {
        format: 'legacy',
        scoring: true,
        root: { name: '', legacy: legacy({ on_reject_stated: true }), items: [{ group: { name: 'a', legacy: legacy({ on_reject_stated: true }), items: tests(0) } }, { group: { name: 'b', legacy: legacy({ on_reject_stated: true }), items: tests(1) } }] },
      };
      const out = gradeTree(tree, [wa, undefined], names(2));
      expect(out.groups.find((g) => g.name === 'b')!.message).to.match(/not judged/);
      expect(skipsTest(tree, [wa], 1)).to.equal(true);
    });
  });

  describe('2025-09 trees (test_group.yaml)', () => {
    /** A scoring tree of sample (test 0) and this secret. */
    const withSample = (secret: GroupNode): GroupTree => ({ format: '2025-09', scoring: true, root: { name: '', modern: modern(), items: [{ group: { name: 'sample', modern: modern(), items: tests(0) } }, { group: secret }] } });
    /** sample, and secret of three groups by min (CMS subtasks). */
    function subtasks(): GroupTree {
      const g = (name: string, max: number, first: number): { group: GroupNode } => ({ group: { name, modern: modern({ max_score: max, score_aggregation: 'min' }), items: tests(first, first + 1) } });
      return withSample({ name: 'secret', modern: modern({ max_score: 100, score_aggregation: 'sum' }), items: [g('secret/1', 20, 1), g('secret/2', 30, 3), g('secret/3', 50, 5)] });
    }

    it('three subtasks by min: a group scores only when all its tests pass; secret sums them', () => {
      const out = gradeTree(subtasks(), [ac, ac, ac, ac, wa, ac, ac], names(7));
      expect(out.points).to.equal(70);
      expect(out.max_points).to.equal(100);
      expect(out.verdict).to.equal('partial');
      expect(out.groups.map((g) => [g.name, g.verdict, g.score])).to.deep.equal([
        ['sample', 'accepted', null],
        ['secret', 'wrong_answer', 70],
        ['secret/1', 'accepted', 20],
        ['secret/2', 'wrong_answer', 0],
        ['secret/3', 'accepted', 50],
      ]);
      expect(gradeTree(subtasks(), Array(7).fill(ac), names(7))).to.include({ verdict: 'accepted', points: 100 });
      expect(gradeTree(subtasks(), [ac, wa, ac, wa, ac, tle, ac], names(7))).to.include({ verdict: 'wrong_answer', points: 0 });
    });

    it('sum aggregation: each test is worth max_score / N; score_multiplier.txt is a fraction of that, score.txt the score itself', () => {
      const tree: GroupTree = { format: '2025-09', scoring: true, root: { name: '', modern: modern(), items: [{ group: { name: 'secret', modern: modern({ max_score: 90, score_aggregation: 'sum' }), items: tests(0, 1, 2) } }] } };
      const out = gradeTree(tree, [ac, { verdict: 'accepted', feedback: { accepted: true, multiplier: '0.5' } }, { verdict: 'accepted', feedback: { accepted: true, score: '10' } }], names(3));
      expect(out.points).to.equal(30 + 15 + 10);
      expect(out.testPoints).to.deep.equal([30, 15, 10]);
    });

    it('the judge errors the spec lists', () => {
      const secret = (aggregation: ModernRules['score_aggregation'], max: number | null, ...results: GradedTest[]) =>
        gradeTree({ format: '2025-09', scoring: true, root: { name: '', modern: modern(), items: [{ group: { name: 'secret', modern: modern({ max_score: max, score_aggregation: aggregation }), items: tests(...results.map((_, i) => i)) } }] } }, results, names(results.length));
      const cases: [string, ReturnType<typeof secret>][] = [
        ['unbounded without score.txt', secret('sum', null, ac)],
        ['rejected with a score file', secret('sum', 10, { verdict: 'wrong_answer', feedback: { accepted: false, score: '1' } })],
        ['multiplier for unbounded', secret('sum', null, { verdict: 'accepted', feedback: { accepted: true, multiplier: '0.5' } })],
        ['both files', secret('sum', 10, { verdict: 'accepted', feedback: { accepted: true, multiplier: '0.5', score: '1' } })],
        ['a score file in pass-fail', secret('pass-fail', 10, { verdict: 'accepted', feedback: { accepted: true, score: '1' } })],
        ['score.txt above the maximum', secret('sum', 10, { verdict: 'accepted', feedback: { accepted: true, score: '11' } })],
        ['invalid contents', secret('sum', 10, { verdict: 'accepted', feedback: { accepted: true, multiplier: 'half' } })],
        ['a multiplier above 1', secret('min', 10, { verdict: 'accepted', feedback: { accepted: true, multiplier: '1.5' } })],
      ];
      for (const [what, out] of cases) {
        expect(out.verdict, what).to.equal('checker_error');
        expect(out.groups.find((g) => g.name === 'secret')!.message, what).to.be.a('string');
      }
      // Unbounded with score.txt is fine.
      expect(secret('sum', null, { verdict: 'accepted', feedback: { accepted: true, score: '7' } })).to.include({ verdict: 'accepted', points: 7 });
    });

    it('require_pass: a group whose required group failed is not run and scores 0', () => {
      const tree = withSample({
        name: 'secret',
        modern: modern({ max_score: 100, score_aggregation: 'sum' }),
        items: [
          { group: { name: 'secret/a', modern: modern({ max_score: 40 }), items: tests(1) } },
          { group: { name: 'secret/b', modern: modern({ max_score: 60, require_pass: ['secret/a', 'sample'] }), items: tests(2) } },
        ],
      });
      expect(skipsTest(tree, [ac, wa], 2)).to.equal(true);
      expect(skipsTest(tree, [wa, ac], 2)).to.equal(true);
      expect(skipsTest(tree, [ac, ac], 2)).to.equal(false);
      const out = gradeTree(tree, [ac, wa, undefined], names(3));
      expect(out.points).to.equal(0);
      expect(out.groups.find((g) => g.name === 'secret/b')!.message).to.match(/require_pass secret\/a/);
      expect(gradeTree(tree, [ac, ac, ac], names(3))).to.include({ verdict: 'accepted', points: 100 });
    });

    it('a pass-fail problem: no score, the first failure is the verdict', () => {
      const tree: GroupTree = { format: '2025-09', scoring: false, root: { name: '', modern: modern(), items: [{ group: { name: 'sample', modern: modern(), items: tests(0) } }, { group: { name: 'secret', modern: modern(), items: tests(1, 2) } }] } };
      expect(gradeTree(tree, [ac, tle, wa], names(3))).to.include({ verdict: 'timeout', points: null });
      expect(gradeTree(tree, [ac, ac, ac], names(3))).to.include({ verdict: 'accepted', points: null });
    });

    it("a group's score above its max_score is a judge error", () => {
      const tree: GroupTree = {
        format: '2025-09',
        scoring: true,
        root: { name: '', modern: modern(), items: [{ group: { name: 'secret', modern: modern({ max_score: 10, score_aggregation: 'sum' }), items: [{ group: { name: 'secret/a', modern: modern({ max_score: 8, score_aggregation: 'min' }), items: tests(0) } }, { group: { name: 'secret/b', modern: modern({ max_score: 8, score_aggregation: 'min' }), items: tests(1) } }] } }] },
      };
      const out = gradeTree(tree, [ac, ac], names(2));
      expect(out.verdict).to.equal('checker_error');
      expect(out.groups.find((g) => g.name === 'secret')!.message).to.match(/exceeds its max_score 10/);
    });
  });
});
