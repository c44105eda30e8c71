import type { RunResult, TestResult } from '../result.js';

// A run's result as MCP content, written for a model to read: the status, the output
// and error streams and the figures as text, and the images the program wrote under
// /box/out (return_files) as image content it can look at.

export type Content = { type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string };

/** Media types MCP clients show as images. */
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif']);

const figures = (r: { time: number | null; total: number | null; memory: number | null; exit_code: number | null; signal: number | null }): string =>
  [
    `exit code ${r.exit_code ?? 'none'}`,
    ...(r.signal !== null ? [`signal ${r.signal}`] : []),
    `time ${r.time ?? '?'} s CPU (${r.total ?? '?'} s wall)`,
    `memory ${r.memory ?? '?'} KB`,
  ].join(', ');

function stream(name: string, text: string | null, truncated = false): string[] {
  if (text === null || text === '') return [`${name}: (empty)`];
  return [`${name}${truncated ? ' (truncated)' : ''}:`, text.endsWith('\n') ? text.slice(0, -1) : text];
}

function files(r: Pick<RunResult, 'files' | 'files_truncated' | 'files_dropped'>): string[] {
  if (r.files === undefined) return [];
  const lines = [`files under /box/out: ${r.files.length === 0 ? 'none' : r.files.map((f) => `${f.name} (${f.mime}, ${f.size} bytes)`).join(', ')}`];
  if (r.files_truncated) lines.push(`files left out: ${(r.files_dropped ?? []).map((f) => `${f.name} (${f.size} bytes)`).join(', ')}`);
  return lines;
}

const images = (r: Pick<RunResult, 'files'>): Content[] =>
  (r.files ?? []).filter((f) => IMAGE_TYPES.has(f.mime)).map((f) => ({ type: 'image', data: f.content, mimeType: f.mime }));

/** One run's result (run_code). */
export function runContent(r: RunResult): Content[] {
  const text = [
    `status: ${r.status}`,
    figures(r),
    ...(r.compile_output ? stream('compile output', r.compile_output) : []),
    ...stream('output', r.output, r.stdout_truncated),
    ...stream('error', r.error, r.stderr_truncated),
    ...files(r),
    `submission: ${r.id}`,
  ].join('\n');
  return [{ type: 'text', text }, ...images(r)];
}

/** Characters of a failing test's output shown: enough to see the mistake; get_submission has the rest. */
const TEST_OUTPUT_SHOWN = 4000;

const clipped = (text: string): string =>
  text.length <= TEST_OUTPUT_SHOWN ? text : `${text.slice(0, TEST_OUTPUT_SHOWN)}\n… (the first ${TEST_OUTPUT_SHOWN} of ${text.length} characters; get_submission has all of it)`;

function testLines(t: TestResult, n: number): string[] {
  const head = `test ${n}${t.name !== undefined ? ` (${t.name})` : ''}: ${t.verdict ?? t.status}${t.score !== undefined ? `, score ${t.score}` : ''}`;
  if (t.status === 'skipped') return [head];
  const lines = [head, `  ${figures(t)}`];
  if (t.checker_message) lines.push(`  checker: ${t.checker_message}`);
  // What a failing test printed is what a model needs to fix the program.
  if (t.verdict !== 'accepted') {
    lines.push(...stream('output', clipped(t.output)).map((l) => `  ${l}`), ...(t.error ? stream('error', clipped(t.error)).map((l) => `  ${l}`) : []));
  }
  return lines;
}

/** A judged run's result (judge): the overall verdict and score, then each test's. */
export function judgedContent(r: RunResult): Content[] {
  const text = [
    `verdict: ${r.verdict ?? r.status}${r.score !== undefined ? `, score ${r.score}` : ''}`,
    ...(r.problem ? [`problem: ${r.problem.id} version ${r.problem.version}`] : []),
    ...(r.checker_message ? [`checker: ${r.checker_message}`] : []),
    ...(r.compile_output ? stream('compile output', r.compile_output) : []),
    ...(r.tests ?? []).flatMap((t, i) => testLines(t, i + 1)),
    `submission: ${r.id}`,
  ].join('\n');
  return [{ type: 'text', text }];
}
