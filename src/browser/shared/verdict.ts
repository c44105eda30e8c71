import { statusWords, verdictWords } from '../../portal/verdicts.js';

// The line under the output once a run has ended, for the widget and the playground
// alike: what happened, in words (a judged run's verdict: `Accepted`, `Wrong answer`),
// then the run's time and peak memory in human units when the server measured them
// (`Finished · 41 ms · 2.7 MB`).

export interface ReturnedFile {
  name: string;
  size: number;
  mime: string;
  /** Base64. */
  content: string;
}

export interface RunResult {
  status: string;
  output?: string;
  error?: string;
  compile_output?: string | null;
  exit_code?: number | null;
  time?: number | null;
  total?: number | null;
  memory?: number | null;
  truncated?: boolean;
  verdict?: string;
  score?: number;
  checker_message?: string | null;
  files?: ReturnedFile[];
  files_truncated?: boolean;
  files_dropped?: { name: string; size: number }[];
}

/** Seconds as `41 ms` below one second, `1.25 s` above. */
export const duration = (s: number): string => (s < 1 ? `${Math.round(s * 1000)} ms` : `${s.toFixed(2)} s`);

/** Kilobytes (the result's unit) as `812 KB` or `2.7 MB`. */
export const size = (kb: number): string => (kb < 1024 ? `${kb} KB` : `${(kb / 1024).toFixed(1)} MB`);

export function verdictText(r: RunResult): string {
  let what = r.verdict !== undefined ? verdictWords(r.verdict) : statusWords(r.status);
  if (r.status === 'runtime_error' && typeof r.exit_code === 'number') what += ` (exit code ${r.exit_code})`;
  const parts = [what];
  // CPU time first: wall time would count the seconds a reader took to type input.
  const seconds = r.time ?? r.total;
  if (typeof seconds === 'number') parts.push(duration(seconds));
  if (typeof r.memory === 'number') parts.push(size(r.memory));
  if (r.truncated) parts.push('output cut at 64 KB');
  return parts.join(' · ');
}
