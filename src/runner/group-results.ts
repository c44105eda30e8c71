import { gradedOf, gradeTree, skipsTest, type GroupTree } from '../judge/groups.js';
import type { RunResult, TestResult } from '../result.js';

// A stored package's groups on the runner: which tests its on_reject (or require_pass)
// leaves unrun, and the result with each group's verdict and score and the problem's, as
// src/judge/groups.ts computes them from the tests' results.

/** Whether test `index` is skipped by the package's groups, its earlier tests' results known. */
export function groupSkips(tree: GroupTree | null | undefined, results: readonly TestResult[], index: number): boolean {
  return tree ? skipsTest(tree, results.map(gradedOf), index) : false;
}

/** The result with the package's groups (when it has them), its verdict and score theirs; validators' score files taken off the tests. */
export function withGroups(result: RunResult, tree: GroupTree | null | undefined): RunResult {
  const tests = result.tests ?? [];
  const graded = tests.map(gradedOf);
  for (const t of tests) delete (t as { score_files?: unknown }).score_files;
  if (!tree || tests.length === 0) return result;
  const grade = gradeTree(tree, graded, tests.map((t) => t.name ?? ''));
  const scored = tests.map((t, i) => {
    // In a scoring package a validator that accepted (exit 42) accepted the test, whatever
    // score it wrote: that score is the test's points, not a fraction of it.
    const judged = tree.scoring && graded[i]?.feedback?.accepted && (t.verdict === 'wrong_answer' || t.verdict === 'partial') ? { ...t, verdict: 'accepted' as const, score: 1 } : t;
    const points = grade.testPoints[i];
    return points !== null && points !== undefined ? { ...judged, points } : judged;
  });
  const out: RunResult = { ...result, verdict: grade.verdict, groups: grade.groups.map((g) => ({ ...g, name: g.name })), tests: scored };
  if (grade.points !== null) {
    out.points = grade.points;
    out.max_points = grade.max_points;
    if (grade.max_points !== null && grade.max_points > 0) out.score = Math.min(1, Math.max(0, grade.points / grade.max_points));
  }
  return out;
}
