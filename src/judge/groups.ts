import type { ScoreFiles } from './checkers/types.js';
import type { ProgramSource } from './settings.js';
import type { ResultVerdict, TestVerdict } from './verdict.js';

// A problem package's tree of test groups (data/sample, data/secret and the groups under
// them) and how a submission's tests' verdicts become each group's verdict and score and
// the problem's, as the package's own judge computes them:
// - legacy and 2023-07-draft (testdata.yaml), as problemtools does: each group's items
//   (its tests and subgroups, in lexicographic order) judged in turn, stopping at the
//   first not accepted under on_reject: break; a test's score is its validator's
//   score.txt, else accept_score or reject_score; the group's verdict and score are the
//   default grader's over its items (grader_flags), or a judge error when one is;
// - 2025-09 (test_group.yaml): result aggregation as the format's spec words it
//   (max_score, score_aggregation pass-fail | sum | min, require_pass, score.txt and
//   score_multiplier.txt, and the judge errors it lists).
// Pure: the runner gives the tests' results and gets the groups back.

export type PackageFormat = 'legacy' | '2025-09';

/** testdata.yaml's settings of a group, inherited from its parent where it gives none. */
export interface LegacyRules {
  on_reject: 'break' | 'continue';
  /** The package said on_reject itself (somewhere up the tree or in problem.yaml): tests it stops are then not run. */
  on_reject_stated: boolean;
  grading: 'default' | 'custom';
  grader_flags: string[];
  accept_score: number;
  reject_score: number;
  /** The range of scores the group expects, null where unbounded (-inf, +inf); informative. */
  range: [number | null, number | null];
}

/** test_group.yaml's settings of sample, secret or a group of secret. */
export interface ModernRules {
  /** null: unbounded. */
  max_score: number | null;
  score_aggregation: 'pass-fail' | 'sum' | 'min';
  /** Groups (or sample) whose tests must all be accepted for this one to be run and scored. */
  require_pass: string[];
}

export interface GroupNode {
  /** The path under data/ (sample, secret/group1), '' for data/ itself. */
  name: string;
  legacy?: LegacyRules;
  modern?: ModernRules;
  items: GroupItem[];
}

/** A subgroup, or a test by its index in the problem's tests (which are in the tree's order). */
export type GroupItem = { group: GroupNode } | { test: number };

export interface GroupTree {
  format: PackageFormat;
  /** type: scoring (a score is computed); else pass-fail. */
  scoring: boolean;
  root: GroupNode;
  /** The package's custom grader (graders/), for its groups of grading: custom. */
  grader?: ProgramSource;
}

/**
 * A custom grader's answer to a group's items (`VERDICT score` lines) with its flags, or
 * null while it is not known: the runner runs the grader for each input asked and grades
 * again (src/runner/group-results.ts), so the grading here stays a pure function.
 */
export type CustomGrader = (input: string, flags: readonly string[]) => { verdict: KattisVerdict; score: number } | null;

/** What the grading reads of a test's result: its verdict, and the score files its validator wrote. */
export interface GradedTest {
  verdict: TestVerdict;
  /** feedback_dir/score.txt and score_multiplier.txt as the validator wrote them (trimmed), when it wrote them, and whether it accepted. */
  feedback?: ScoreFiles;
}

export interface GroupResult {
  name: string;
  verdict: ResultVerdict;
  /** The group's score as the package counts it (null: a pass-fail problem's). */
  score: number | null;
  /** Its bound, where the package gives one. */
  max_score: number | null;
  /** The tests under it (its own and its subgroups'), by name. */
  tests: string[];
  /** Why it is a judge error, or was not judged (require_pass). */
  message?: string;
}

export interface TreeResult {
  verdict: ResultVerdict;
  /** The problem's score as the package counts it (secret's in 2025-09, data/'s in legacy); null when pass-fail. */
  points: number | null;
  max_points: number | null;
  groups: GroupResult[];
  /** Each test's score as the package counts it (null where it has none: pass-fail, or not judged). */
  testPoints: (number | null)[];
}

/** Kattis' names of verdicts, as its graders read them. */
export type KattisVerdict = 'AC' | 'WA' | 'PE' | 'TLE' | 'RTE' | 'MLE' | 'OLE' | 'JE';

/** A grader's output as problemtools takes it (judge/grade.py): one `VERDICT score` line, else a judge error. */
export function graderAnswer(stdout: string): { verdict: KattisVerdict; score: number } {
  const m = /^(AC|WA|TLE|RTE|MLE|OLE|JE)\s+(-?[0-9.]+)\s*$/.exec(stdout);
  const score = m ? Number(m[2]) : NaN;
  return m && Number.isFinite(score) ? { verdict: m[1] as KattisVerdict, score } : { verdict: 'JE', score: 0 };
}

function kattisVerdict(t: GradedTest): KattisVerdict {
  // A validator that accepted with a score of 0 in score.txt: accepted, of score 0.
  if (t.feedback?.accepted && t.verdict !== 'checker_error') return 'AC';
  switch (t.verdict) {
    case 'accepted':
    case 'partial':
      return 'AC';
    case 'wrong_answer':
    case 'presentation_error':
    case 'skipped':
      return 'WA';
    case 'timeout':
      return 'TLE';
    case 'memory_limit':
      return 'MLE';
    case 'output_limit':
      return 'OLE';
    case 'runtime_error':
    case 'process_limit':
      return 'RTE';
    case 'checker_error':
      return 'JE';
  }
}

/** A validator's score file as a number, or null when it does not hold one. */
function scoreNumber(text: string): number | null {
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** The tests under a node, in order. */
export function testsUnder(node: GroupNode): number[] {
  return node.items.flatMap((item) => ('test' in item ? [item.test] : testsUnder(item.group)));
}

function allGroups(node: GroupNode): GroupNode[] {
  return [node, ...node.items.flatMap((item) => ('group' in item ? allGroups(item.group) : []))];
}

// ---- legacy (problemtools) ----

interface LegacyItemResult {
  verdict: KattisVerdict;
  score: number;
  /** The test whose verdict this is (for the verdict's runbox name and message). */
  test: number | null;
}

const WORST_FIRST: KattisVerdict[] = ['JE', 'RTE', 'MLE', 'TLE', 'OLE', 'WA', 'PE', 'AC'];

/**
 * problemtools' default grader (support/default_grader) over a group's items: the verdict
 * by worst_error (default), first_error or always_accept, accept_if_any_accepted, the
 * score by sum (default), avg, min or max, ignore_sample keeping the last item only; its
 * output is printed with %f, so the score is rounded to 6 decimals as Kattis reads it.
 */
export function defaultGrader(items: readonly { verdict: KattisVerdict; score: number }[], flags: readonly string[]): { verdict: KattisVerdict; score: number } {
  if (items.length === 0) return { verdict: 'AC', score: 0 };
  let verdictOf: (v: KattisVerdict[]) => KattisVerdict = (v) => WORST_FIRST[Math.min(...[...v, 'AC' as const].map((x) => WORST_FIRST.indexOf(x)))]!;
  let scoreOf: (s: number[]) => number = (s) => s.reduce((a, b) => a + b, 0);
  let ignoreSample = false;
  let anyAccepted = false;
  for (const flag of flags) {
    if (flag === 'worst_error' || flag === 'no_errors') verdictOf = (v) => WORST_FIRST[Math.min(...[...v, 'AC' as const].map((x) => WORST_FIRST.indexOf(x)))]!;
    if (flag === 'first_error') verdictOf = (v) => v.find((x) => x !== 'AC') ?? 'AC';
    if (flag === 'always_accept') verdictOf = () => 'AC';
    if (flag === 'sum') scoreOf = (s) => s.reduce((a, b) => a + b, 0);
    if (flag === 'avg') scoreOf = (s) => s.reduce((a, b) => a + b, 0) / s.length;
    if (flag === 'min') scoreOf = (s) => Math.min(...s);
    if (flag === 'max') scoreOf = (s) => Math.max(...s);
    if (flag === 'ignore_sample') ignoreSample = true;
    if (flag === 'accept_if_any_accepted') anyAccepted = true;
  }
  let kept = items;
  if (ignoreSample) {
    // The grader asserts one or two items (sample and secret) and answers JE 0 otherwise.
    if (items.length > 2) return { verdict: 'JE', score: 0 };
    kept = items.slice(-1);
  }
  const verdicts = kept.map((i) => i.verdict);
  const verdict = anyAccepted && verdicts.includes('AC') ? 'AC' : verdictOf(verdicts);
  return { verdict, score: Number(scoreOf(kept.map((i) => i.score)).toFixed(6)) };
}

function legacyTestResult(rules: LegacyRules, scoring: boolean, t: GradedTest | undefined, index: number, testPoints: (number | null)[]): LegacyItemResult {
  const graded = t ?? { verdict: 'skipped' as const };
  const verdict = kattisVerdict(graded);
  let score = verdict === 'AC' ? rules.accept_score : rules.reject_score;
  const own = graded.feedback?.score !== undefined ? scoreNumber(graded.feedback.score) : null;
  if (verdict === 'AC' && own !== null) score = own;
  if (!scoring) score = 0;
  testPoints[index] = scoring ? score : null;
  return { verdict, score, test: index };
}

function gradeLegacy(node: GroupNode, scoring: boolean, tests: readonly (GradedTest | undefined)[], out: Map<GroupNode, LegacyItemResult>, testPoints: (number | null)[], custom?: CustomGrader): LegacyItemResult {
  const rules = node.legacy!;
  const children: LegacyItemResult[] = [];
  for (const item of node.items) {
    const r = 'test' in item ? legacyTestResult(rules, scoring, tests[item.test], item.test, testPoints) : gradeLegacy(item.group, scoring, tests, out, testPoints, custom);
    children.push(r);
    if (r.verdict !== 'AC' && rules.on_reject === 'break') break;
  }
  let result: LegacyItemResult;
  const judgeError = children.find((c) => c.verdict === 'JE');
  if (judgeError) result = { ...judgeError };
  else {
    const graded =
      rules.grading === 'custom'
        ? children.length === 0
          ? { verdict: 'AC' as const, score: 0 }
          : (custom?.(children.map((c) => `${c.verdict} ${scoring ? c.score : 0}\n`).join(''), rules.grader_flags) ?? { verdict: 'JE' as const, score: 0 })
        : defaultGrader(children, rules.grader_flags);
    // The verdict's test: the last item with the group's verdict, as problemtools finds its reason.
    const matching = [...children].reverse().find((c) => c.verdict === graded.verdict);
    result = { verdict: graded.verdict, score: scoring ? graded.score : 0, test: matching?.test ?? null };
  }
  out.set(node, result);
  return result;
}

// ---- 2025-09 ----

interface ModernScore {
  score: number;
  allAccepted: boolean;
  judgeError?: string;
}

function modernGroup(node: GroupNode, tests: readonly (GradedTest | undefined)[], out: Map<GroupNode, ModernScore>, passed: (name: string) => boolean, testPoints: (number | null)[]): ModernScore {
  const rules = node.modern!;
  const { max_score: max, score_aggregation: aggregation } = rules;
  const subgroups = node.items.filter((i): i is { group: GroupNode } => 'group' in i).map((i) => i.group);
  const own = node.items.filter((i): i is { test: number } => 'test' in i).map((i) => i.test);
  const unmet = rules.require_pass.filter((name) => !passed(name));
  let result: ModernScore;
  if (unmet.length > 0) {
    for (const g of subgroups) out.set(g, { score: 0, allAccepted: false });
    for (const i of testsUnder(node)) testPoints[i] = 0;
    result = { score: 0, allAccepted: false, judgeError: undefined };
    out.set(node, result);
    return result;
  }
  const scores: number[] = [];
  let allAccepted = true;
  let judgeError: string | undefined;
  for (const g of subgroups) {
    const r = modernGroup(g, tests, out, passed, testPoints);
    scores.push(r.score);
    allAccepted &&= r.allAccepted;
    judgeError ??= r.judgeError;
  }
  const caseMax = max === null ? null : aggregation === 'min' ? max : own.length > 0 ? max / own.length : max;
  for (const i of own) {
    const r = modernTest(tests[i], aggregation, caseMax);
    testPoints[i] = aggregation === 'pass-fail' ? null : r.score;
    scores.push(r.score);
    allAccepted &&= r.accepted;
    judgeError ??= r.judgeError && `test ${i}: ${r.judgeError}`;
  }
  let score: number;
  if (aggregation === 'pass-fail') score = allAccepted ? (max ?? 0) : 0;
  else if (aggregation === 'sum') score = scores.reduce((a, b) => a + b, 0);
  else score = scores.length > 0 ? Math.min(...scores) : 0;
  if (max !== null && score > max * (1 + 1e-9) + 1e-9) judgeError ??= `its score ${score} exceeds its max_score ${max}`;
  result = { score, allAccepted, ...(judgeError ? { judgeError } : {}) };
  out.set(node, result);
  return result;
}

/** A test's score under 2025-09's rules, or the judge error its score files make. */
function modernTest(t: GradedTest | undefined, aggregation: ModernRules['score_aggregation'], max: number | null): { score: number; accepted: boolean; judgeError?: string } {
  if (!t) return { score: 0, accepted: false };
  const accepted = t.feedback?.accepted ?? (t.verdict === 'accepted' || t.verdict === 'partial');
  const { score: scoreText, multiplier: multiplierText } = t.feedback ?? {};
  const wrote = scoreText !== undefined || multiplierText !== undefined;
  if (t.verdict === 'checker_error') return { score: 0, accepted: false };
  if (!accepted) return wrote ? { score: 0, accepted, judgeError: 'the validator rejected it but wrote a score file' } : { score: 0, accepted };
  if (aggregation === 'pass-fail') return wrote ? { score: 0, accepted, judgeError: 'the validator wrote a score file in a pass-fail group' } : { score: 0, accepted };
  if (scoreText !== undefined && multiplierText !== undefined) return { score: 0, accepted, judgeError: 'the validator wrote both score.txt and score_multiplier.txt' };
  if (multiplierText !== undefined) {
    if (max === null) return { score: 0, accepted, judgeError: 'the validator wrote score_multiplier.txt for a test of unbounded score' };
    const m = scoreNumber(multiplierText);
    if (m === null || m < 0 || m > 1) return { score: 0, accepted, judgeError: `score_multiplier.txt holds ${JSON.stringify(multiplierText.slice(0, 40))}, not a number from 0 to 1` };
    return { score: m * max, accepted };
  }
  if (scoreText !== undefined) {
    const s = scoreNumber(scoreText);
    if (s === null || s < 0) return { score: 0, accepted, judgeError: `score.txt holds ${JSON.stringify(scoreText.slice(0, 40))}, not a non-negative number` };
    if (max !== null && s > max * (1 + 1e-9) + 1e-9) return { score: 0, accepted, judgeError: `score.txt holds ${s}, more than the test's maximum ${max}` };
    return { score: s, accepted };
  }
  if (max === null) return { score: 0, accepted, judgeError: 'the validator accepted a test of unbounded score without writing score.txt' };
  return { score: max, accepted };
}

// ---- both ----

/** The runbox verdict of a set of tests: the first not accepted's, else accepted. */
function firstFailure(indices: readonly number[], tests: readonly (GradedTest | undefined)[]): ResultVerdict {
  for (const i of indices) {
    const v = tests[i]?.verdict ?? 'skipped';
    if (v !== 'accepted' && v !== 'skipped' && !(v === 'partial')) return v;
  }
  return indices.some((i) => (tests[i]?.verdict ?? 'skipped') === 'skipped') ? 'wrong_answer' : 'accepted';
}

/** A test result as the grading reads it (its verdict and its validator's score files). */
export function gradedOf(result: { verdict?: TestVerdict; score_files?: ScoreFiles } | undefined): GradedTest | undefined {
  if (!result?.verdict) return undefined;
  return { verdict: result.verdict, ...(result.score_files ? { feedback: result.score_files } : {}) };
}

/**
 * Each group's verdict and score and the problem's from its tests' results (index by
 * index with the tree's tests; undefined or skipped: not run). `names` are the tests'.
 */
export function gradeTree(tree: GroupTree, tests: readonly (GradedTest | undefined)[], names: readonly string[], custom?: CustomGrader): TreeResult {
  const testPoints: (number | null)[] = tests.map(() => null);
  const nameOf = (indices: number[]) => indices.map((i) => names[i] ?? String(i));
  if (tree.format === 'legacy') {
    const out = new Map<GroupNode, LegacyItemResult>();
    const root = gradeLegacy(tree.root, tree.scoring, tests, out, testPoints, custom);
    const max = tree.root.legacy!.range[1];
    const verdictOf = (r: LegacyItemResult | undefined, node: GroupNode): ResultVerdict => {
      if (!r) return 'wrong_answer';
      if (r.verdict === 'JE') return 'checker_error';
      if (r.verdict === 'AC') return tree.scoring && node.legacy!.range[1] !== null && r.score < node.legacy!.range[1] ? 'partial' : 'accepted';
      const v = r.test !== null ? tests[r.test]?.verdict : undefined;
      return v && v !== 'accepted' && v !== 'partial' && v !== 'skipped' ? v : 'wrong_answer';
    };
    const groups = allGroups(tree.root).map((g): GroupResult => {
      const r = out.get(g);
      return { name: g.name, verdict: verdictOf(r, g), score: tree.scoring ? (r?.score ?? 0) : null, max_score: tree.scoring ? g.legacy!.range[1] : null, tests: nameOf(testsUnder(g)), ...(r ? {} : { message: 'not judged: an earlier item of its parent group was not accepted (on_reject: break)' }) };
    });
    return { verdict: verdictOf(root, tree.root), points: tree.scoring ? root.score : null, max_points: tree.scoring ? max : null, groups, testPoints };
  }
  const out = new Map<GroupNode, ModernScore>();
  const byName = new Map(allGroups(tree.root).map((g) => [g.name, g]));
  const passed = (name: string) => {
    const g = byName.get(name);
    return g !== undefined && testsUnder(g).every((i) => tests[i]?.verdict === 'accepted');
  };
  for (const item of tree.root.items) if ('group' in item) modernGroup(item.group, tests, out, passed, testPoints);
  const secret = byName.get('secret');
  const secretScore = secret ? out.get(secret) : undefined;
  const judgeError = [...out.values()].find((r) => r.judgeError)?.judgeError;
  const all = testsUnder(tree.root);
  const groups = allGroups(tree.root)
    .filter((g) => g !== tree.root)
    .map((g): GroupResult => {
      const r = out.get(g);
      const unmet = g.modern!.require_pass.filter((n) => !passed(n));
      const scored = tree.scoring && g.name !== 'sample';
      return {
        name: g.name,
        verdict: r?.judgeError ? 'checker_error' : firstFailure(testsUnder(g), tests),
        score: scored ? (r?.score ?? 0) : null,
        max_score: scored ? g.modern!.max_score : null,
        tests: nameOf(testsUnder(g)),
        ...(r?.judgeError ? { message: r.judgeError } : unmet.length > 0 ? { message: `not judged: require_pass ${unmet.join(', ')} not all accepted` } : {}),
      };
    });
  const points = tree.scoring ? (secretScore?.score ?? 0) : null;
  let verdict = judgeError ? 'checker_error' : firstFailure(all, tests);
  if (tree.scoring && verdict !== 'accepted' && verdict !== 'checker_error' && (points ?? 0) > 0) verdict = 'partial';
  return { verdict, points, max_points: tree.scoring ? (secret?.modern?.max_score ?? null) : null, groups, testPoints };
}

/**
 * Whether test `index` is not to be run, given the results so far (every earlier test's):
 * a group the package said on_reject: break of has an earlier item not accepted, or
 * (2025-09) a group it lies in requires a group that was not all accepted.
 */
export function skipsTest(tree: GroupTree, tests: readonly (GradedTest | undefined)[], index: number, custom?: CustomGrader): boolean {
  const path = pathTo(tree.root, index);
  if (!path) return false;
  if (tree.format === 'legacy') {
    for (const [node, position] of path) {
      const rules = node.legacy!;
      if (rules.on_reject !== 'break' || !rules.on_reject_stated) continue;
      for (const item of node.items.slice(0, position)) {
        if ('test' in item) {
          if (kattisVerdict(tests[item.test] ?? { verdict: 'skipped' }) !== 'AC') return true;
        } else {
          const r = gradeLegacy(item.group, tree.scoring, tests, new Map(), tests.map(() => null), custom);
          if (r.verdict !== 'AC') return true;
        }
      }
    }
    return false;
  }
  const byName = new Map(allGroups(tree.root).map((g) => [g.name, g]));
  for (const [node] of path) {
    for (const name of node.modern?.require_pass ?? []) {
      const g = byName.get(name);
      if (!g || !testsUnder(g).every((i) => tests[i]?.verdict === 'accepted')) return true;
    }
  }
  return false;
}

/** The groups from the root down to the test, each with the position of the item leading to it. */
function pathTo(node: GroupNode, index: number): [GroupNode, number][] | null {
  for (const [position, item] of node.items.entries()) {
    if ('test' in item) {
      if (item.test === index) return [[node, position]];
    } else {
      const below = pathTo(item.group, index);
      if (below) return [[node, position], ...below];
    }
  }
  return null;
}
