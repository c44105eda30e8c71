// What a run's status and a judged test's verdict are called on every face (portal
// pages, the playground, the widget): one word list, imported by the server's views and
// the browser bundles alike (it is plain data).

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
