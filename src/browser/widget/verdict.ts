// The line under the output once a run has ended: what happened, in words, with the
// run's time and peak memory when the server measured them.

export interface RunResult {
  status: string;
  output?: string;
  error?: string;
  exit_code?: number | null;
  time?: number | null;
  total?: number | null;
  memory?: number | null;
  truncated?: boolean;
}

const STATUS_TEXT: Record<string, string> = {
  success: 'Finished',
  runtime_error: 'Runtime error',
  compile_error: 'Compile error',
  timeout: 'Time limit exceeded',
  memory_limit: 'Memory limit exceeded',
  output_limit: 'Too much output',
  process_limit: 'Too many processes',
  internal_error: 'Could not run',
};

export function verdictText(r: RunResult): string {
  let what = STATUS_TEXT[r.status] ?? r.status;
  if (r.status === 'runtime_error' && typeof r.exit_code === 'number') what += ` (exit code ${r.exit_code})`;
  const parts = [what];
  const seconds = r.total ?? r.time;
  if (typeof seconds === 'number') parts.push(`time ${seconds < 1 ? `${Math.round(seconds * 1000)} ms` : `${seconds.toFixed(2)} s`}`);
  if (typeof r.memory === 'number') parts.push(`memory ${r.memory < 1024 ? `${r.memory} KB` : `${(r.memory / 1024).toFixed(1)} MB`}`);
  if (r.truncated) parts.push('output cut at 64 KB');
  return parts.join(' · ');
}
