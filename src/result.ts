import Type, { type Static } from 'typebox';
import { RESULT_VERDICTS, TEST_VERDICTS } from './judge/verdict.js';
import { OMITTED_REASONS, type OmittedReason } from './sandbox/archive.js';
import { orderedJson, RawJson } from './util/raw-json.js';

// The one result shape, used by callbacks, submission lookups, synchronous runs and
// WebSocket results. Compatible with existing clients of this kind of API.

export const RUN_STATUSES = [
  'success',
  'runtime_error',
  'compile_error',
  'timeout',
  'memory_limit',
  'output_limit',
  'process_limit',
  'internal_error',
  /** The caller of a synchronous or WebSocket run went away; the run was stopped. */
  'cancelled',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

// Enum keeps the static type (a Union over a mapped array would type as never).
export const RunStatusSchema = Type.Enum(RUN_STATUSES);

/** The time limits a timeout may have passed (ExecutionFields.limit_exceeded). */
export const LIMITS_EXCEEDED = ['cpu', 'wall'] as const;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/** What one execution of the program produced. */
export const ExecutionFields = {
  status: RunStatusSchema,
  /** stdout, at most 64 KB kept. */
  output: Type.String(),
  /** stderr, at most 64 KB kept (the compiler's messages on compile_error). */
  error: Type.String(),
  exit_code: Nullable(Type.Integer()),
  signal: Nullable(Type.Integer()),
  /** CPU seconds. */
  time: Nullable(Type.Number()),
  /** Wall seconds. */
  total: Nullable(Type.Number()),
  /** Peak memory in KB; null when unavailable after a forced stop. */
  memory: Nullable(Type.Integer()),
  /** Which limit stopped a timeout: "cpu" (its CPU time, all its processes together) or
   *  "wall" (its wall-clock limit); null for any other status. */
  limit_exceeded: Nullable(Type.Enum(LIMITS_EXCEEDED)),
  truncated: Type.Boolean(),
};

/** One execution of the program, as its fields. */
export const ExecutionSchema = Type.Object(ExecutionFields);
export type Execution = Static<typeof ExecutionSchema>;

/** A file the program wrote under /box/out/, brought back (return_files). */
export const ReturnedFileSchema = Type.Object({
  /** Its path below /box/out/. */
  name: Type.String(),
  size: Type.Integer(),
  /** Its media type, from its name (application/octet-stream when unknown). */
  mime: Type.String(),
  /** Base64. */
  content: Type.String(),
});
export type ReturnedFile = Static<typeof ReturnedFileSchema>;

/** The files a run brought back, present when the request asked for them (return_files). */
export const ReturnedFilesFields = {
  /** Name-sorted, within RETURN_FILES_LIMITS (src/limits.ts). */
  files: Type.Optional(Type.Array(ReturnedFileSchema)),
  /** Files were left out: past the bounds or for their names (files_dropped), or lost with a spoilt stage stream. */
  files_truncated: Type.Optional(Type.Boolean()),
  /** What was left out, by name, size and why: `limits` past the bounds, `name` a name
   *  that is not UTF-8 (shown with each byte outside UTF-8 as `\xHH`, a backslash as `\\`). */
  files_dropped: Type.Optional(Type.Array(Type.Object({ name: Type.String(), size: Type.Integer(), reason: Type.Enum([...OMITTED_REASONS]) }))),
};
export type ReturnedFiles = { files: ReturnedFile[]; files_truncated: boolean; files_dropped: { name: string; size: number; reason: OmittedReason }[] };

/** A judged run's fields (the request had expected outputs, a checker program, an interactor or a problem). */
export const JudgedFields = {
  /** accepted, wrong_answer, presentation_error, partial, checker_error, or the run's own status when it did not succeed (skipped: not run). */
  verdict: Type.Optional(Type.Enum([...TEST_VERDICTS])),
  /** 0 to 1. */
  score: Type.Optional(Type.Number()),
  /** The checker's words, at most 4 KB; null when it said nothing. */
  checker_message: Type.Optional(Nullable(Type.String())),
  /** A scoring package's test: its score as the package counts it (accept_score, or its validator's score.txt). */
  points: Type.Optional(Type.Number()),
};

/** A test group of a stored Kattis package (data/sample, data/secret, secret/group1; '' is data/ itself). */
export const GroupResultSchema = Type.Object({
  name: Type.String(),
  /** The group's verdict as the package's judge gives it (problemtools' default grader, or 2025-09's aggregation). */
  verdict: Type.Enum([...RESULT_VERDICTS]),
  /** Its score as the package counts it; null in a pass-fail problem (and for sample in 2025-09). */
  score: Nullable(Type.Number()),
  /** Its maximum (range's upper end, or max_score); null when unbounded. */
  max_score: Nullable(Type.Number()),
  /** Its tests' names, its subgroups' included, in order. */
  tests: Type.Array(Type.String()),
  /** Why it is a judge error, or was not judged. */
  message: Type.Optional(Type.String()),
});

/** A test of a multi-test request: its run, and when judged its verdict (and a stored problem's test its name). */
export const TestResultSchema = Type.Object({
  /** A stored problem's test, or a judged test the request named. */
  name: Type.Optional(Type.String()),
  ...ExecutionFields,
  /** skipped: an earlier test failed and the request said stop_on_failure; not run, not billed. */
  status: Type.Enum([...RUN_STATUSES, 'skipped']),
  ...JudgedFields,
  /** A multi-pass problem's test: the passes that ran (its other fields are the last pass's). */
  passes: Type.Optional(Type.Integer({ minimum: 1 })),
  ...ReturnedFilesFields,
});
export type TestResult = Static<typeof TestResultSchema>;

/** The limits each run of the program had (TIME_LIMIT_RULE in src/limits.ts): a timeout's
 *  limit_exceeded names which one it passed. */
export const RunLimitsSchema = Type.Object({
  /** CPU seconds of a run, all its processes together: the time limit. */
  time: Type.Number(),
  /** Wall-clock seconds of a run. */
  wall_time: Type.Number(),
  /** KB. */
  memory: Type.Integer(),
});

/** A kernel session's cell (src/sessions/kernel.ts): what a notebook shows of it beside its stdout and stderr. */
export const KernelResultSchema = Type.Object({
  /** The repr of the cell's last expression, as a notebook displays it; null when it has none or it is None. */
  value: Nullable(Type.String()),
  /** The matplotlib figures the cell left open, as PNG. */
  images: Type.Array(Type.Object({ name: Type.String(), content_base64: Type.String() })),
  /** The exception that ended the cell (its traceback is in error), or why the cell did not finish (KernelDied, Timeout); null when it ran to its end. */
  error: Nullable(Type.Object({ name: Type.String(), message: Type.String() })),
  /** Names the kernel could not keep for the next cell (unpicklable values: open files, generators, threads, lambdas), and why. */
  not_kept: Type.Array(Type.Object({ name: Type.String(), reason: Type.String() })),
});
export type KernelResult = Static<typeof KernelResultSchema>;

export const RunResultSchema = Type.Object({
  id: Type.String(),
  compiler: Type.String(),
  ...ExecutionFields,
  /** Absent when nothing ran (internal_error, cancelled) and in results stored before it was reported. */
  limits: Type.Optional(RunLimitsSchema),
  /** The request's verdict: the first test not accepted (else accepted), or compile_error and the like when no test ran. */
  verdict: Type.Optional(Type.Enum([...RESULT_VERDICTS])),
  /** The tests' scores weighted by their weights, as a fraction (0 to 1); a scoring package's: points / max_points. */
  score: JudgedFields.score,
  /** A scoring package's score as its judge counts it (Kattis' score: secret's in 2025-09, data/'s in legacy). */
  points: Type.Optional(Type.Number()),
  /** Its maximum, where the package gives one. */
  max_points: Type.Optional(Nullable(Type.Number())),
  checker_message: JudgedFields.checker_message,
  /** A stored problem's run: the problem and the version it ran. */
  problem: Type.Optional(Type.Object({ id: Type.String(), version: Type.Integer() })),
  stdout_truncated: Type.Boolean(),
  stderr_truncated: Type.Boolean(),
  compile_output: Nullable(Type.String()),
  ...ReturnedFilesFields,
  extra_params: Nullable(Type.Record(Type.String(), Type.Unknown())),
  /** A stored Kattis package's test groups, data/ first then depth first, each beside its tests. */
  groups: Type.Optional(Type.Array(GroupResultSchema)),
  tests: Type.Optional(Type.Array(TestResultSchema)),
  /** A kernel session's cell. */
  kernel: Type.Optional(KernelResultSchema),
});
export type RunResult = Static<typeof RunResultSchema>;

/** The execution fields of a run that never ran (could not be completed, or skipped): no output, no figures. */
export function notRun<S extends TestResult['status']>(status: S, error = '') {
  return { status, output: '', error, exit_code: null, signal: null, time: null, total: null, memory: null, limit_exceeded: null, truncated: false };
}

/** The result of a run that could not be completed (no program output to report). */
export function internalErrorResult(
  job: { id: string; compiler: string; extra_params?: Record<string, unknown> | null },
  message: string,
  status: 'internal_error' | 'cancelled' = 'internal_error',
): RunResult {
  return {
    id: job.id,
    compiler: job.compiler,
    ...notRun(status, message),
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    extra_params: job.extra_params ?? null,
  };
}

/** The order of a result's fields in every answer (the order docs/api.md gives). */
export const RESULT_FIELD_ORDER = [
  'id',
  'compiler',
  'status',
  'verdict',
  'score',
  'points',
  'max_points',
  'checker_message',
  'output',
  'error',
  'exit_code',
  'signal',
  'time',
  'total',
  'memory',
  'limit_exceeded',
  'limits',
  'truncated',
  'stdout_truncated',
  'stderr_truncated',
  'compile_output',
  'problem',
  'files',
  'files_truncated',
  'files_dropped',
  'extra_params',
  'groups',
  'tests',
] as const;
const TEST_FIELD_ORDER = ['name', 'status', ...Object.keys(JudgedFields), ...Object.keys(ExecutionFields).filter((k) => k !== 'status'), ...Object.keys(ReturnedFilesFields)];

/** Fields a result stored before they were reported lacks, as presented then. */
const STORED_BEFORE = { limit_exceeded: null };

export interface PresentOptions {
  /** extra_params as the client sent it (JSON text); null: none. Default: the result's own value. */
  extraParamsJson?: string | null;
  /** Fields written before the result's (a WebSocket message's type and id). */
  first?: [string, unknown][];
  /** Fields written after (a WebSocket message's submission_id). */
  last?: [string, unknown][];
  /** Result fields left out (replaced by a field of `first`). */
  omit?: string[];
}

/**
 * A result as JSON text, the one presentation for every channel (synchronous answer,
 * lookup, callback, WebSocket): fields in RESULT_FIELD_ORDER (any other field before
 * extra_params), each test's fields in their order too, and extra_params exactly as
 * the client sent it. Stored results are jsonb, whose key order is its own.
 */
export function presentResult(result: RunResult, options: PresentOptions = {}): string {
  const fields = result as unknown as Record<string, unknown>;
  const omit = new Set(options.omit ?? []);
  const known = new Set<string>(RESULT_FIELD_ORDER);
  const entries: [string, unknown][] = [...(options.first ?? [])];
  const add = (key: string) => {
    if (omit.has(key)) return;
    if (key === 'extra_params') {
      const raw = options.extraParamsJson;
      entries.push([key, raw === undefined ? (fields[key] ?? null) : raw === null ? null : new RawJson(raw)]);
    } else if (key === 'tests') {
      const tests = fields[key] as Record<string, unknown>[] | undefined;
      if (tests) entries.push([key, new RawJson(`[${tests.map((t) => orderedJson(orderedEntries({ ...STORED_BEFORE, ...t }, TEST_FIELD_ORDER))).join(',')}]`)]);
    } else entries.push([key, fields[key] === undefined && key in STORED_BEFORE ? null : fields[key]]);
  };
  for (const key of RESULT_FIELD_ORDER) {
    if (key === 'extra_params') for (const other of Object.keys(fields)) if (!known.has(other)) add(other);
    add(key);
  }
  entries.push(...(options.last ?? []));
  return orderedJson(entries);
}

function orderedEntries(value: Record<string, unknown>, order: readonly string[]): [string, unknown][] {
  const rest = Object.keys(value).filter((k) => !order.includes(k));
  return [...order, ...rest].map((k) => [k, value[k]]);
}
