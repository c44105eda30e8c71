import { JUDGE_LIMITS } from '../limits.js';
import type { RunStatus } from '../result.js';
import { wholeCharacters } from '../util/output-text.js';
import type { CheckResult } from './checkers/index.js';
import type { ScoreFiles } from './checkers/types.js';

// A judged test's verdict, computed in one place from how its run ended and what the
// comparison said, and the request's verdict and score from its tests'.

/** Verdicts of a test. A run that did not succeed keeps its own status as its verdict. */
export const TEST_VERDICTS = [
  'accepted',
  'wrong_answer',
  'presentation_error',
  /** A checker's score strictly between 0 and 1. */
  'partial',
  'timeout',
  'memory_limit',
  'runtime_error',
  'output_limit',
  'process_limit',
  /** The checker (or interactor) itself failed: crashed, timed out, said so (testlib 3), or answered an unknown exit code. */
  'checker_error',
  /** Not run: an earlier test was not accepted and the request asked to stop on failure. */
  'skipped',
] as const;
export type TestVerdict = (typeof TEST_VERDICTS)[number];

/** A request's verdict: a test's, or what ended it before any test ran. */
export const RESULT_VERDICTS = [...TEST_VERDICTS.filter((v) => v !== 'skipped'), 'compile_error', 'internal_error', 'cancelled'] as const;
export type ResultVerdict = (typeof RESULT_VERDICTS)[number];

export interface Judged {
  verdict: TestVerdict;
  score: number;
  /** The checker's words, at most JUDGE_LIMITS.checkerMessageMaxBytes; null when it said nothing or did not run. */
  checker_message: string | null;
  /** A Kattis validator's score files, for the package's groups (src/judge/groups.ts); not part of the result. */
  score_files?: ScoreFiles;
}

/** A checker's message as a result keeps it: at most 4 KB, cut at a whole character; null when empty. */
export function checkerMessage(text: string | Buffer): string | null {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const max = JUDGE_LIMITS.checkerMessageMaxBytes;
  const kept = bytes.length > max ? wholeCharacters(bytes.subarray(0, max)) : bytes;
  const message = kept.toString('utf8').replace(/\u0000/g, '\uFFFD').trimEnd();
  return message === '' ? null : message;
}

/** The verdict for a checker's score: 1 accepted, 0 wrong, in between partial. */
export function verdictForScore(score: number): { verdict: 'accepted' | 'wrong_answer' | 'partial'; score: number } {
  const s = Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0;
  return { verdict: s >= 1 ? 'accepted' : s <= 0 ? 'wrong_answer' : 'partial', score: s };
}

/**
 * A test's verdict: the run's own status when it did not succeed (it is not compared),
 * else the comparison's, its score exactly as the checker gave it (testlib's points
 * 0.00000001 is not 0).
 */
export function testVerdict(status: Exclude<RunStatus, 'compile_error' | 'internal_error' | 'cancelled'>, check: CheckResult | null): Judged {
  if (status !== 'success') return { verdict: status, score: 0, checker_message: null };
  if (!check) throw new Error('a successful run is compared before its verdict is given');
  return { verdict: check.verdict, score: check.verdict === 'accepted' ? 1 : check.score, checker_message: checkerMessage(check.message), ...(check.scoreFiles ? { score_files: check.scoreFiles } : {}) };
}

export const SKIPPED: Judged = { verdict: 'skipped', score: 0, checker_message: null };

/**
 * The request's verdict and score: the first test that was not accepted (else accepted),
 * and the tests' scores weighted by their weights (1 each unless given), as a fraction
 * of the whole weight.
 */
export function overallVerdict(tests: readonly (Judged & { weight?: number })[]): { verdict: ResultVerdict; score: number } {
  const failed = tests.find((t) => t.verdict !== 'accepted');
  let weights = 0;
  let sum = 0;
  for (const t of tests) {
    const w = t.weight ?? 1;
    weights += w;
    sum += w * t.score;
  }
  return { verdict: failed ? (failed.verdict as ResultVerdict) : 'accepted', score: weights > 0 ? sum / weights : 0 };
}

/**
 * An interactive test's verdict, from the program's run, the interactor's word and which
 * of the two ended first, as problemtools decides it (its _run_interactive): an
 * interactor that failed, or that ended first with a rejection, gives its verdict (a
 * program that then crashed on the closed pipe, or ran out of time waiting, was already
 * judged); otherwise a limit the program hit, then its runtime error, then the
 * interactor's verdict. The interactor's message is kept whatever the verdict.
 */
export function interactiveVerdict(status: Exclude<RunStatus, 'compile_error' | 'internal_error' | 'cancelled'>, interactor: CheckResult, interactorFirst: boolean): Judged {
  const judged = testVerdict('success', interactor);
  if (interactor.verdict === 'checker_error' || (interactorFirst && interactor.verdict !== 'accepted')) return judged;
  if (status !== 'success') return { ...testVerdict(status, null), checker_message: judged.checker_message };
  return judged;
}
