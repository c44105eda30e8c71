import Type, { type Static } from 'typebox';
import { REQUEST_LIMITS } from '../limits.js';

// Request and answer schemas, declared once: they validate requests, give the handlers
// their types and are published as-is in GET /api/openapi.json.

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** NUL-free UTF-8 text of at most maxBytes encoded bytes. */
export function Utf8Text(maxBytes: number, description: string) {
  return Type.Refine(
    Type.String({ pattern: '^[^\\u0000]*$', description: `${description} UTF-8, no NUL characters, at most ${maxBytes} encoded bytes.`, 'x-max-utf8-bytes': maxBytes }),
    (v: string) => utf8Bytes(v) <= maxBytes,
    (v: string) => `must be at most ${maxBytes} UTF-8 encoded bytes (it has ${utf8Bytes(v)})`,
  );
}

/**
 * A compiler identifier. Which ones exist is the catalogue's (recipes can be added while
 * the service runs), so the admission checks it; the published document lists them (openapi.ts).
 */
export const CompilerIdSchema = Type.Unsafe<string>({ description: 'Compiler identifier (see GET /api/compilers/).', 'x-runbox-compiler-id': true });

export const ExtraParams = Type.Refine(
  Type.Record(Type.String(), Type.Unknown(), {
    description: `Any JSON object, returned unchanged with the result. At most ${REQUEST_LIMITS.extraParamsMaxBytes} bytes serialized.`,
  }),
  (v: Record<string, unknown>) => utf8Bytes(JSON.stringify(v)) <= REQUEST_LIMITS.extraParamsMaxBytes,
  (v: Record<string, unknown>) =>
    `must be at most ${REQUEST_LIMITS.extraParamsMaxBytes} bytes as JSON (it has ${utf8Bytes(JSON.stringify(v))})`,
);

export const TestCase = Type.Object({ input: Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Standard input of this test.') });

export const RunCodeRequest = Type.Object(
  {
    code: Utf8Text(REQUEST_LIMITS.codeMaxBytes, 'Source code.'),
    input: Type.Optional(Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Standard input; lines separated by newlines.')),
    compiler: CompilerIdSchema,
    extra_params: Type.Optional(ExtraParams),
    tests: Type.Optional(
      Type.Array(TestCase, {
        minItems: 1,
        description:
          "Instead of input: several inputs run against the same program. At most the plan's tests per request; each test counts as one submission.",
      }),
    ),
  },
  { description: 'A run submission (spec 2.1). Unknown fields are ignored.' },
);
export type RunCodeRequest = Static<typeof RunCodeRequest>;

export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String({ description: 'Stable machine-readable reason, e.g. invalid_request, rate_limited.' }),
    message: Type.String({ description: 'What went wrong, for people.' }),
  }),
});

const Count = Type.Integer({ minimum: 0 });

export const UsageRecordSchema = Type.Object({
  month: Type.String({ description: 'Calendar month in UTC, YYYY-MM.' }),
  submissions: Type.Integer({ description: 'Submissions counted for the account this month.' }),
  monthly_limit: Type.Integer({ description: "The account's monthly allowance." }),
  remaining: Type.Integer({ description: 'Allowance left this month.' }),
  resets_at: Type.String({ description: 'Start of the next month, ISO 8601 UTC.' }),
  submissions_per_minute: Type.Integer({ description: "The plan's LIMIT of submissions per rolling minute (current count: current.submissions_last_minute)." }),
  pending_submissions: Type.Integer({ description: "The plan's LIMIT of queued + running submissions (current count: current.pending)." }),
  running_submissions: Type.Integer({ description: "The plan's LIMIT of runs at once (current count: current.running)." }),
  current: Type.Object({ submissions_last_minute: Count, pending: Count, running: Count }, { description: 'Current counts behind the three limits.' }),
  key: Type.Optional(
    Type.Object(
      {
        submissions: Type.Integer({ description: 'Submissions through the calling key this month.' }),
        monthly_limit: Type.Union([Type.Integer(), Type.Null()], { description: "The key's own monthly limit; null: none." }),
        remaining: Type.Union([Type.Integer(), Type.Null()], { description: "Left of the key's own limit; null: no limit of its own." }),
      },
      { description: 'Counts of the calling key; omitted for calls without a key context.' },
    ),
  ),
});

export const LimitsDocument = Type.Object({
  run: Type.Object({
    memory_bytes: Type.Integer(),
    cpu_cores: Type.Number(),
    timeout_ms: Type.Integer(),
    max_processes: Type.Integer(),
    workspace_bytes: Type.Integer(),
    tmp_bytes: Type.Integer(),
    storage_counts_toward_memory: Type.Boolean(),
    network: Type.Boolean(),
    output_kept_bytes_per_stream: Type.Integer(),
    output_flood_bytes_both_streams: Type.Integer(),
    output_flood_exit_code: Type.Integer(),
    process_limit_exit_code: Type.Integer(),
  }),
  request: Type.Object({
    code_max_bytes: Type.Integer(),
    input_max_bytes: Type.Integer(),
    extra_params_max_bytes: Type.Integer(),
    body_max_bytes: Type.Integer(),
  }),
  account: Type.Object({
    plan: Type.String(),
    submissions_per_minute: Type.Integer(),
    rate_window_ms: Type.Integer(),
    pending_submissions: Type.Integer(),
    runs_at_once: Type.Integer(),
    tests_per_request: Type.Integer(),
    monthly_submissions: Type.Integer(),
    max_monthly_submissions_any_plan: Type.Integer(),
    monthly_period: Type.String(),
    per_key_monthly_limit: Type.String(),
  }),
  websocket_runs_per_second_per_connection: Type.Integer(),
});

export const CompilerList = Type.Array(
  Type.Object({
    id: CompilerIdSchema,
    language: Type.Union([Type.String(), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()], { description: 'The installed toolchain version; null when not installed.' }),
    available: Type.Boolean(),
    piston: Type.String({ description: "The language name Piston's clients send for it (POST /piston/api/v2/execute)." }),
    judge0: Type.Union([Type.Integer(), Type.Null()], { description: 'Its Judge0 CE language id (POST /judge0/submissions); null where Judge0 has none.' }),
    successor: Type.Optional(Type.String({ description: 'Only for a retired identifier (never available): the one to use instead.' })),
  }),
);
