import { SANDBOX_LAYOUT } from '../sandbox/spec.js';
import type { CheckResult } from './checkers/index.js';
import { verdictForScore } from './verdict.js';

// The two conventions problem setters write checkers and interactors in, taken as they
// are so that existing files work unchanged:
// - testlib (Codeforces, Polygon): a checker gets `input output answer`, an interactor
//   `input output` (output: a file it may write for a checker); exit 0 ok, 1 wrong
//   answer, 2 presentation error, 3 failure of the checker itself, 7 points (the score
//   is the first word of its message after "points"), 8 unexpected end of the output (a
//   presentation error), and _pc(n) (exit n or 50 + n, "partially correct (n)": n
//   percent); the message on stderr as testlib writes it.
// - Kattis / ICPC output validators: `input answer feedback_dir`, the program's output
//   on stdin (an interactor: the program's output on stdin, its stdout to the program);
//   exit 42 accepted, 43 wrong answer; the message in feedback_dir/judgemessage.txt, a
//   score (scoring problems) in feedback_dir/score.txt.

export const CONVENTIONS = ['testlib', 'kattis'] as const;
export type Convention = (typeof CONVENTIONS)[number];

/** Where a checker stage finds the test's files (in its workspace) and writes its feedback. */
export const CHECK_FILES = {
  input: 'judge-input',
  output: 'judge-output',
  answer: 'judge-answer',
  /** testlib interactors write this (their "tout"); it is not read. */
  interactorOutput: 'judge-interactor-output',
  /** Kattis' feedback_dir, made empty in the workspace; its files come back with the stage. */
  feedbackDir: 'judge-feedback',
  judgeMessage: 'judgemessage.txt',
  score: 'score.txt',
  /** 2025-09: a fraction of the test's maximum score. */
  scoreMultiplier: 'score_multiplier.txt',
} as const;

const inWorkspace = (name: string) => `${SANDBOX_LAYOUT.workspace}/${name}`;
/** feedback_dir as Kattis gives it: ending in a slash, so that a validator appends a file's name to it. */
const feedbackDirArgument = () => `${inWorkspace(CHECK_FILES.feedbackDir)}/`;

/** The checker's arguments (after its run command) and whether the output goes to its stdin. */
export function checkerArguments(convention: Convention): { args: string[]; outputOnStdin: boolean } {
  if (convention === 'testlib') return { args: [inWorkspace(CHECK_FILES.input), inWorkspace(CHECK_FILES.output), inWorkspace(CHECK_FILES.answer)], outputOnStdin: false };
  return { args: [inWorkspace(CHECK_FILES.input), inWorkspace(CHECK_FILES.answer), feedbackDirArgument()], outputOnStdin: true };
}

/** The interactor's arguments (after its run command). */
export function interactorArguments(convention: Convention): string[] {
  if (convention === 'testlib') return [inWorkspace(CHECK_FILES.input), inWorkspace(CHECK_FILES.interactorOutput)];
  return [inWorkspace(CHECK_FILES.input), inWorkspace(CHECK_FILES.answer), feedbackDirArgument()];
}

/** The directories a checker or interactor stage starts with, and the paths it brings back (Kattis' feedback_dir). */
export function feedbackPaths(convention: Convention): { dirs: string[]; collect: string[] } {
  return convention === 'kattis' ? { dirs: [CHECK_FILES.feedbackDir], collect: [`${CHECK_FILES.feedbackDir}/`] } : { dirs: [], collect: [] };
}

/** The feedback files a Kattis stage left, by their names in feedback_dir. */
export function feedbackOf(collected: readonly { name: string; content: Buffer }[]): Record<string, Buffer> {
  const prefix = `${CHECK_FILES.feedbackDir}/`;
  return Object.fromEntries(collected.filter((f) => f.name.startsWith(prefix)).map((f) => [f.name.slice(prefix.length), f.content]));
}

/** How a checker or interactor stage ended, as far as its verdict goes. */
export interface ConventionOutcome {
  /** 'exited' with exitCode; anything else (a signal, a limit) is a failure of the checker. */
  how: 'exited' | 'signaled' | 'timeout' | 'memory_limit' | 'output_limit' | 'process_limit';
  exitCode: number | null;
  signal: number | null;
  stderr: Buffer;
  /** Feedback files it wrote (Kattis), by name. */
  feedback: Record<string, Buffer>;
}

const TESTLIB = { ok: 0, wrongAnswer: 1, presentationError: 2, fail: 3, points: 7, unexpectedEof: 8 } as const;
const KATTIS = { accepted: 42, wrongAnswer: 43 } as const;

/** A number written whole, as testlib writes points (%.10f trimmed, or %d) and a score file holds one. */
const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** `text` as a number when it is one whole, else null. */
export function wholeNumber(text: string): number | null {
  return NUMBER.test(text) ? Number(text) : null;
}

/**
 * testlib's points (exit 7): its message is "points " and then the points as the first
 * token (quitp writes `points 0.5 message`). quitpi's `points_info=…` is no score.
 */
export function testlibPoints(stderr: string): number | null {
  return wholeNumber(stderr.replace(/^points\s+/, '').split(/\s/, 1)[0]!);
}

/**
 * testlib's partially correct, quitf(_pc(n), …): it exits PC_BASE_EXIT_CODE + n (0 + n,
 * or 50 + n built for testsys) and its message begins "partially correct (n)". The
 * message tells it from an exit code of the same number; n is read as percent of the test.
 */
export function testlibPartial(exitCode: number | null, stderr: string): number | null {
  const m = /^partially correct \((\d+)\)/.exec(stderr);
  if (!m || exitCode === null) return null;
  const n = Number(m[1]);
  return exitCode === n || exitCode === 50 + n ? n : null;
}

function failed(what: string, o: ConventionOutcome, message: string): CheckResult {
  const how =
    o.how === 'exited' ? `exited with code ${o.exitCode}` :
    o.how === 'signaled' ? `was killed by signal ${o.signal}` :
    `was stopped: ${o.how.replace('_', ' ')}`;
  return { verdict: 'checker_error', score: 0, message: message === '' ? `the ${what} ${how}` : `the ${what} ${how}: ${message}` };
}

/** What a checker's (or interactor's) end says of the program's output. */
export function conventionVerdict(convention: Convention, o: ConventionOutcome, what: 'checker' | 'interactor' = 'checker'): CheckResult {
  const stderr = o.stderr.toString('utf8').trim();
  if (convention === 'testlib') {
    if (o.how !== 'exited') return failed(what, o, stderr);
    const partial = testlibPartial(o.exitCode, stderr);
    if (partial !== null) return { ...verdictForScore(partial / 100), message: stderr };
    switch (o.exitCode) {
      case TESTLIB.ok:
        return { verdict: 'accepted', score: 1, message: stderr };
      case TESTLIB.wrongAnswer:
        return { verdict: 'wrong_answer', score: 0, message: stderr };
      case TESTLIB.presentationError:
      case TESTLIB.unexpectedEof:
        return { verdict: 'presentation_error', score: 0, message: stderr };
      case TESTLIB.points: {
        const points = testlibPoints(stderr);
        if (points === null) return failed(what, o, `no score as the first word of its message (testlib writes "points 0.5 …"; quitpi's points_info is not one): ${stderr || 'empty'}`);
        return { ...verdictForScore(points), message: stderr };
      }
      default:
        return failed(what, o, stderr);
    }
  }
  const judgeMessage = o.feedback[CHECK_FILES.judgeMessage]?.toString('utf8').trim() ?? '';
  const message = judgeMessage || stderr;
  if (o.how !== 'exited') return failed(what, o, message);
  const scoreText = o.feedback[CHECK_FILES.score]?.toString('utf8').trim();
  const multiplierText = o.feedback[CHECK_FILES.scoreMultiplier]?.toString('utf8').trim();
  // The score files as written, for a package's groups to count (src/judge/groups.ts).
  const files = (accepted: boolean) =>
    scoreText !== undefined || multiplierText !== undefined
      ? { scoreFiles: { accepted, ...(scoreText !== undefined ? { score: scoreText.slice(0, 64) } : {}), ...(multiplierText !== undefined ? { multiplier: multiplierText.slice(0, 64) } : {}) } }
      : {};
  if (o.exitCode === KATTIS.wrongAnswer) return { verdict: 'wrong_answer', score: 0, message, ...files(false) };
  if (o.exitCode !== KATTIS.accepted) return failed(what, o, message);
  if (scoreText === undefined || scoreText === '') return { verdict: 'accepted', score: 1, message, ...files(true) };
  const score = wholeNumber(scoreText);
  if (score === null) return failed(what, o, `${CHECK_FILES.score} does not hold a number (${JSON.stringify(scoreText.slice(0, 40))})`);
  return { ...verdictForScore(score), message, ...files(true) };
}
