import Type, { type Static } from 'typebox';

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
  truncated: Type.Boolean(),
};

export const TestResultSchema = Type.Object(ExecutionFields);
export type TestResult = Static<typeof TestResultSchema>;

export const RunResultSchema = Type.Object({
  id: Type.String(),
  compiler: Type.String(),
  ...ExecutionFields,
  stdout_truncated: Type.Boolean(),
  stderr_truncated: Type.Boolean(),
  compile_output: Nullable(Type.String()),
  extra_params: Nullable(Type.Record(Type.String(), Type.Unknown())),
  tests: Type.Optional(Type.Array(TestResultSchema)),
});
export type RunResult = Static<typeof RunResultSchema>;

/** The result of a run that could not be completed (no program output to report). */
export function internalErrorResult(
  job: { id: string; compiler: string; extra_params?: Record<string, unknown> | null },
  message: string,
  status: 'internal_error' | 'cancelled' = 'internal_error',
): RunResult {
  return {
    id: job.id,
    compiler: job.compiler,
    status,
    output: '',
    error: message,
    exit_code: null,
    signal: null,
    time: null,
    total: null,
    memory: null,
    truncated: false,
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    extra_params: job.extra_params ?? null,
  };
}
