import { fmtKilobytes, fmtSeconds } from './format.js';

// What a run's status and a judged test's verdict are called on every face (portal
// pages, the playground, the widget), and how the code boxes' keys are explained: one
// word list, imported by the server's views and the browser bundles alike (plain data).

/** How keys work in a code box or the code editor (the widget's and the playground's): said under it, and to screen readers with it. */
export const EDITING_HINT = 'Tab indents; press Esc, then Tab, to move on. Ctrl+Enter runs.';

export const STATUS_WORDS: Record<string, string> = {
  success: 'Finished',
  runtime_error: 'Runtime error',
  compile_error: 'Compile error',
  timeout: 'Time limit exceeded',
  memory_limit: 'Memory limit exceeded',
  output_limit: 'Too much output',
  process_limit: 'Too many processes',
  internal_error: 'Could not run',
  cancelled: 'Stopped',
};

export const VERDICT_WORDS: Record<string, string> = {
  ...STATUS_WORDS,
  accepted: 'Accepted',
  wrong_answer: 'Wrong answer',
  presentation_error: 'Presentation error',
  partial: 'Partly accepted',
  checker_error: 'Checker error',
  skipped: 'Skipped',
};

/** A status or verdict in words (the code itself when it is a new one). */
export const statusWords = (status: string): string => STATUS_WORDS[status] ?? status;
export const verdictWords = (verdict: string): string => VERDICT_WORDS[verdict] ?? verdict;

/** A test as every table and heading names it: its name (a stored problem's, or the request's), else "Test 3" (1-based). */
export const testLabel = (name: string | null | undefined, index: number): string => name ?? `Test ${index + 1}`;

/** Which test a judged run's output is (as src/runner/judge.ts picks it): the first test not accepted, else the last that ran; -1 for none. */
export function shownTest(tests: { verdict?: string | null | undefined }[]): number {
  const failed = tests.findIndex((t) => t.verdict !== 'accepted' && t.verdict !== 'skipped' && t.verdict !== null && t.verdict !== undefined);
  if (failed >= 0) return failed;
  for (let i = tests.length - 1; i >= 0; i--) if (tests[i]!.verdict !== 'skipped') return i;
  return -1;
}

/** What the line under a run's output needs of its result. */
export interface VerdictFields {
  status: string;
  verdict?: string | undefined;
  exit_code?: number | null | undefined;
  time?: number | null | undefined;
  total?: number | null | undefined;
  memory?: number | null | undefined;
  truncated?: boolean | undefined;
}

/**
 * The line under the output once a run has ended: what happened, in words (a judged
 * run's verdict), then its CPU time and peak memory (`Finished · 41 ms · 2.7 MB`).
 */
export function verdictText(r: VerdictFields): string {
  let what = r.verdict !== undefined ? verdictWords(r.verdict) : statusWords(r.status);
  if (r.status === 'runtime_error' && typeof r.exit_code === 'number') what += ` (exit code ${r.exit_code})`;
  const parts = [what];
  // CPU time first: wall time would count the seconds a reader took to type input.
  const seconds = r.time ?? r.total;
  if (typeof seconds === 'number') parts.push(fmtSeconds(seconds));
  if (typeof r.memory === 'number') parts.push(fmtKilobytes(r.memory));
  if (r.truncated) parts.push('output cut at 64 KB');
  return parts.join(' · ');
}
