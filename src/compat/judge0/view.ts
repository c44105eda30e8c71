import { compilerEntry } from '../../compilers/catalogue.js';
import type { SubmissionState } from '../../db/schema.js';
import type { RunResult } from '../../result.js';
import { judge0Name } from './languages.js';
import { judge0Verdict, queuedStatus, type Judge0Status } from './statuses.js';

// A runbox submission in Judge0's submission shape (app/serializers/submission_serializer.rb):
// the default eight fields, any others asked for with ?fields=, text fields Base64
// encoded with ?base64_encoded=true. The token is the submission id.

/** What the Judge0 route keeps with the submission (submissions.compat). */
export interface Judge0Kept {
  language_id: number;
  expected_output: string | null;
  callback_url?: string | null;
  command_line_arguments?: string | null;
  cpu_time_limit?: number | null;
  cpu_extra_time?: number | null;
  wall_time_limit?: number | null;
  memory_limit?: number | null;
  redirect_stderr_to_stdout?: boolean;
}

export interface Judge0Source {
  id: string;
  compiler: string;
  state: SubmissionState;
  code?: string;
  input?: string | null;
  created_at?: Date | null;
  finished_at?: Date | null;
  result: RunResult | null;
  compat: Judge0Kept | null;
}

export const DEFAULT_FIELDS = ['token', 'time', 'memory', 'stdout', 'stderr', 'compile_output', 'message', 'status'] as const;

/** Text fields: Base64 encoded when the caller asks for it. */
const TEXT_FIELDS = new Set(['source_code', 'stdin', 'expected_output', 'stdout', 'stderr', 'compile_output', 'message']);

const nullIfEmpty = (s: string | null | undefined): string | null => (s === undefined || s === null || s === '' ? null : s);
const seconds = (s: number | null): string | null => (s === null ? null : s.toFixed(3));
const iso = (d: Date | null | undefined): string | null => (d ? new Date(d).toISOString() : null);

type Value = string | number | boolean | null | Judge0Status | { id: number; name: string };

function fieldValues(s: Judge0Source, recipesDir = ''): Record<string, () => Value> {
  const r = s.state === 'finished' || s.state === 'failed' ? s.result : null;
  const kept = s.compat;
  const verdict = r ? judge0Verdict(r, kept?.expected_output ?? null) : null;
  const status = verdict?.status ?? queuedStatus(s.state === 'running');
  const compiled = r?.status === 'compile_error';
  const entry = () => compilerEntry(s.compiler, recipesDir);
  const languageId = kept?.language_id ?? entry()?.judge0?.id ?? 0;
  return {
    token: () => s.id,
    source_code: () => s.code ?? null,
    language_id: () => languageId,
    language: () => {
      const e = entry();
      return { id: languageId, name: e ? judge0Name(e, e.version) : s.compiler };
    },
    stdin: () => nullIfEmpty(s.input),
    expected_output: () => kept?.expected_output ?? null,
    stdout: () => (r && !compiled ? nullIfEmpty(kept?.redirect_stderr_to_stdout ? r.output + r.error : r.output) : null),
    stderr: () => (r && !compiled && !kept?.redirect_stderr_to_stdout ? nullIfEmpty(r.error) : null),
    compile_output: () => nullIfEmpty(r?.compile_output),
    message: () => verdict?.message ?? null,
    status: () => status,
    status_id: () => status.id,
    time: () => (r && !compiled ? seconds(r.time) : null),
    wall_time: () => (r && !compiled ? seconds(r.total) : null),
    memory: () => (r && !compiled ? r.memory : null),
    exit_code: () => (r && !compiled ? (r.exit_code ?? (r.signal === null ? 0 : null)) : null),
    exit_signal: () => (r && !compiled ? r.signal : null),
    created_at: () => iso(s.created_at),
    finished_at: () => iso(s.finished_at),
    callback_url: () => kept?.callback_url ?? null,
    command_line_arguments: () => kept?.command_line_arguments ?? null,
    cpu_time_limit: () => kept?.cpu_time_limit ?? null,
    cpu_extra_time: () => kept?.cpu_extra_time ?? null,
    wall_time_limit: () => kept?.wall_time_limit ?? null,
    memory_limit: () => kept?.memory_limit ?? null,
    redirect_stderr_to_stdout: () => kept?.redirect_stderr_to_stdout ?? false,
  };
}

/** Every field name a caller may ask for with ?fields= (besides `*`). */
export const KNOWN_FIELDS: readonly string[] = Object.keys(
  fieldValues({ id: '', compiler: '', state: 'queued', result: null, compat: null }),
);

/** The requested fields of ?fields=: the default eight when empty, all with `*`; unknown names are returned apart. */
export function parseFields(param: string | undefined): { fields: string[]; invalid: string[] } {
  const names = (param ?? '').split(',').map((f) => f.trim()).filter((f) => f !== '');
  if (names.length === 0) return { fields: [...DEFAULT_FIELDS], invalid: [] };
  if (names.includes('*')) return { fields: [...KNOWN_FIELDS], invalid: [] };
  return { fields: names.filter((f) => KNOWN_FIELDS.includes(f)), invalid: names.filter((f) => !KNOWN_FIELDS.includes(f)) };
}

export function judge0Submission(s: Judge0Source, options: { base64: boolean; fields: readonly string[]; recipesDir?: string }): Record<string, Value> {
  const values = fieldValues(s, options.recipesDir);
  const out: Record<string, Value> = {};
  for (const name of options.fields) {
    const value = values[name]!();
    out[name] = options.base64 && TEXT_FIELDS.has(name) && typeof value === 'string' ? Buffer.from(value, 'utf8').toString('base64') : value;
  }
  return out;
}

/**
 * The body Judge0 PUTs to callback_url: the default fields, Base64 encoded (as Judge0's
 * IsolateJob#call_callback does), from the delivery's stored {result, compat}.
 */
export function judge0CallbackBody(payload: { result: RunResult; compat: Judge0Kept | null }, submissionId: string): Record<string, Value> {
  const source: Judge0Source = {
    id: submissionId,
    compiler: payload.result.compiler,
    state: 'finished',
    result: payload.result,
    compat: payload.compat,
  };
  return judge0Submission(source, { base64: true, fields: DEFAULT_FIELDS });
}
