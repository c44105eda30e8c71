import { gradedOf, gradeTree, skipsTest, type CustomGrader, type GroupTree, type KattisVerdict } from '../judge/groups.js';
import type { RunResult, TestResult } from '../result.js';

// A stored package's groups on the runner: which tests its on_reject (or require_pass)
// leaves unrun, and the result with each group's verdict and score and the problem's, as
// src/judge/groups.ts computes them from the tests' results. A custom grader (graders/)
// runs in a sandboxed stage for each group's input it is asked, once per input; the
// grading is done again with its answers until it asks nothing new.

export type RunGrader = (input: string, flags: readonly string[]) => Promise<{ verdict: KattisVerdict; score: number }>;

export class GroupGrading {
  private readonly answers = new Map<string, { verdict: KattisVerdict; score: number }>();

  constructor(
    private readonly tree: GroupTree | null | undefined,
    private readonly runGrader?: RunGrader,
  ) {}

  /** `compute` with the grader's answers, run for whatever it asked until it asks nothing new. */
  private async settled<T>(compute: (custom: CustomGrader) => T): Promise<T> {
    for (;;) {
      const asked = new Map<string, { input: string; flags: readonly string[] }>();
      const value = compute((input, flags) => {
        const key = JSON.stringify([input, flags]);
        const known = this.answers.get(key);
        if (known) return known;
        if (this.runGrader) asked.set(key, { input, flags });
        return null;
      });
      if (asked.size === 0) return value;
      for (const [key, { input, flags }] of asked) this.answers.set(key, await this.runGrader!(input, flags));
    }
  }

  /** Whether test `index` is skipped by the package's groups, its earlier tests' results known. */
  async skips(results: readonly TestResult[], index: number): Promise<boolean> {
    const tree = this.tree;
    if (!tree) return false;
    const graded = results.map(gradedOf);
    return this.settled((custom) => skipsTest(tree, graded, index, custom));
  }

  /** The result with the package's groups (when it has them), its verdict and score theirs; validators' score files taken off the tests. */
  async finish(result: RunResult): Promise<RunResult> {
    const tree = this.tree;
    const tests = result.tests ?? [];
    const graded = tests.map(gradedOf);
    for (const t of tests) delete (t as { score_files?: unknown }).score_files;
    if (!tree || tests.length === 0) return result;
    const grade = await this.settled((custom) => gradeTree(tree, graded, tests.map((t) => t.name ?? ''), custom));
    const scored = tests.map((t, i) => {
      // In a scoring package a validator that accepted (exit 42) accepted the test, whatever
      // score it wrote: that score is the test's points, not a fraction of it.
      const judged = tree.scoring && graded[i]?.feedback?.accepted && (t.verdict === 'wrong_answer' || t.verdict === 'partial') ? { ...t, verdict: 'accepted' as const, score: 1 } : t;
      const points = grade.testPoints[i];
      return points !== null && points !== undefined ? { ...judged, points } : judged;
    });
    const out: RunResult = { ...result, verdict: grade.verdict, groups: grade.groups, tests: scored };
    if (grade.points !== null) {
      out.points = grade.points;
      out.max_points = grade.max_points;
      if (grade.max_points !== null && grade.max_points > 0) out.score = Math.min(1, Math.max(0, grade.points / grade.max_points));
    }
    return out;
  }
}
