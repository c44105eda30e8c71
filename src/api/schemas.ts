import Type, { type Static, type TSchema } from 'typebox';
import { FEEDBACK_SETTINGS } from '../problems/feedback.js';
import { PROBLEM_LIMITS, PROGRAM_LIMITS, REQUEST_LIMITS, RUN_LIMITS } from '../limits.js';
import { ProgramFields } from '../program/fields.js';
import { CheckerSchema, InteractorSchema } from '../judge/settings.js';

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

const ExpectedOutput = Utf8Text(REQUEST_LIMITS.inputMaxBytes, "What the program must print (same rules as input): the run is judged, and its result gets a verdict, a score and the checker's message.");

export const TestCase = Type.Object(
  {
    input: Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Standard input of this test (with an interactor: the interactor\'s input).'),
    expected_output: Type.Optional(ExpectedOutput),
    weight: Type.Optional(Type.Number({ minimum: 0, description: "A judged test's weight in the request's score (default 1)." })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "A judged test's name, shown in its result." })),
  },
  { additionalProperties: false },
);

/** The judging fields of a run request (src/judge/request.ts reads them). */
export const JudgingFields = {
  expected_output: Type.Optional(ExpectedOutput),
  checker: Type.Optional(CheckerSchema),
  interactor: Type.Optional(InteractorSchema),
  stop_on_failure: Type.Optional(Type.Boolean({ description: 'End at the first test that is not accepted (ICPC style): the rest are skipped, and not counted or billed.' })),
  problem: Type.Optional(Type.String({ description: "A stored problem of the account (POST /api/v2/problems): its current version's tests, checker, interactor and limits, instead of input or tests." })),
};

export const RunCodeRequest = Type.Object(
  {
    code: Type.Optional(Utf8Text(REQUEST_LIMITS.codeMaxBytes, 'Source code (one file, written under the name the compiler expects); or files instead.')),
    ...ProgramFields,
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
    ...JudgingFields,
  },
  {
    description:
      "A run submission. A field not listed here is refused (400 unknown_field, naming it; another service's name for one of these, such as stdin or language, gets this one's name).",
    additionalProperties: false,
  },
);
export type RunCodeRequest = Static<typeof RunCodeRequest>;

const LIMITS = `runbox takes limits: {"time": CPU seconds, "wall_time": seconds, "memory": KB} for each run, at most the service's ${RUN_LIMITS.timeoutMs / 1000} s and ${RUN_LIMITS.memoryBytes / 1024} KB`;
const COMPILER = 'runbox calls it compiler: an id that names language and version, such as python-3.9.7 (GET /api/compilers/ lists them)';

/** Other services' names (Piston, Judge0 and the like) for runbox's fields or options, with what to send instead. */
const FOREIGN_FIELD_NAMES: Record<string, string> = {
  stdin: 'runbox calls it input',
  language: COMPILER,
  language_id: COMPILER,
  lang: COMPILER,
  version: COMPILER,
  source_code: 'runbox calls it code',
  source: 'runbox calls it code',
  additional_files: `runbox takes files: [{"name", "content", "encoding"}], at most ${PROGRAM_LIMITS.filesMax}`,
  command_line_arguments: 'runbox calls it args: an array of strings',
  timeout: LIMITS,
  time_limit: LIMITS,
  run_timeout: LIMITS,
  cpu_time_limit: LIMITS,
  wall_time_limit: LIMITS,
  memory_limit: LIMITS,
  run_memory_limit: LIMITS,
  compile_timeout: "there is no such option: the compile stage has the service's limits",
  compile_memory_limit: "there is no such option: the compile stage has the service's limits",
  callback_url: "there is no such option: results go to the key's Redirect Url (the callback URL), set in the portal",
};

interface WalkedSchema {
  properties?: Record<string, WalkedSchema>;
  additionalProperties?: unknown;
  items?: WalkedSchema;
  anyOf?: WalkedSchema[];
  const?: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The first member of `value` that `schema` does not take (objects declared with
 * additionalProperties: false), as a message naming it by its path (tests.0.stdin) and,
 * for another service's name of one of runbox's fields, saying runbox's. Walks the
 * schema, not the value, so a deeply nested value costs nothing; checked before the
 * schema, so `{"language": ...}` hears about compiler rather than a missing field.
 */
export function unknownField(schema: TSchema, value: unknown): string | undefined {
  const found = walk(schema as WalkedSchema, value, '');
  return found && isObject(value) ? found + otherServiceHint(value) : found;
}

/** A whole body in Piston's or Judge0's shape: its compatible route takes it unchanged. */
function otherServiceHint(body: Record<string, unknown>): string {
  const has = (...names: string[]) => names.every((n) => Object.hasOwn(body, n));
  if (has('language', 'files') || has('language', 'version')) return '; this is a Piston body: POST /piston/api/v2/execute takes it as it is';
  if (has('source_code', 'language_id')) return '; this is a Judge0 body: POST /judge0/submissions takes it as it is';
  return '';
}

function walk(schema: WalkedSchema, value: unknown, path: string): string | undefined {
  if (schema.anyOf) {
    // A union of messages told apart by their type (WebSocket messages): the one this value names.
    const member = isObject(value) ? schema.anyOf.find((m) => m.properties?.['type']?.const === value['type']) : undefined;
    return member ? walk(member, value, path) : undefined;
  }
  if (schema.items && Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = walk(schema.items, value[i], `${path}${i}.`);
      if (found) return found;
    }
    return undefined;
  }
  if (!schema.properties || !isObject(value)) return undefined;
  // A message of another type is not this schema's to judge member by member: its type is the error.
  const type = schema.properties['type']?.const;
  if (type !== undefined && value['type'] !== type) return undefined;
  for (const name of Object.keys(value)) {
    const declared = Object.hasOwn(schema.properties, name) ? schema.properties[name] : undefined;
    if (declared) {
      const found = walk(declared, value[name], `${path}${name}.`);
      if (found) return found;
    } else if (schema.additionalProperties === false) {
      const hint = Object.hasOwn(FOREIGN_FIELD_NAMES, name) ? FOREIGN_FIELD_NAMES[name] : `the fields are ${Object.keys(schema.properties).join(', ')}`;
      return `unknown field ${path}${name}: ${hint}`;
    }
  }
  return undefined;
}

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
  current: Type.Object(
    { submissions_last_minute: Count, pending: Count, running: Count },
    { description: 'Current counts behind the three limits; submissions_last_minute counts each test of a multi-test request, as the limit does.' },
  ),
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
    timeout_ms: Type.Integer({ description: 'Wall-clock limit of a stage (compile, run) unless lowered.' }),
    cpu_time_ms: Type.Integer({ description: "CPU time of a stage, all its processes together (the cores for the whole timeout): a request's limits.time lowers it, and past it the run is a timeout with limit_exceeded \"cpu\"." }),
    wall_time_per_cpu_time: Type.Number({ description: 'A run given a CPU time (limits.time) and no wall_time has a wall-clock limit of wall_time_per_cpu_time × time + wall_time_extra_ms, at most timeout_ms; past it the run is a timeout with limit_exceeded "wall".' }),
    wall_time_extra_ms: Type.Integer(),
    wall_time_rule: Type.String({ description: 'The same rule in words.' }),
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
    files_max: Type.Integer({ description: "Files of one program (a request's files)." }),
    files_max_bytes: Type.Integer({ description: 'Their decoded bytes together.' }),
    file_name_max_bytes: Type.Integer(),
    args_max: Type.Integer(),
    arg_max_bytes: Type.Integer(),
    compiler_options_max: Type.Integer(),
    return_files_max: Type.Integer({ description: 'Files a run brings back from /box/out/ (return_files).' }),
    return_files_max_bytes: Type.Integer(),
  }),
  account: Type.Object({
    plan: Type.String(),
    submissions_per_minute: Type.Integer(),
    rate_window_ms: Type.Integer(),
    pending_submissions: Type.Integer(),
    runs_at_once: Type.Integer(),
    tests_per_request: Type.Integer(),
    sandbox_seconds_per_request: Type.Integer({ description: "Most sandbox time one request may ask for: its compile stage's timeout plus tests x its run stage's timeout." }),
    problem_storage_bytes: Type.Integer({ description: "Test data the account's stored problems may keep, each distinct file counted once." }),
    monthly_submissions: Type.Integer(),
    max_monthly_submissions_any_plan: Type.Integer(),
    monthly_period: Type.String(),
    per_key_monthly_limit: Type.String(),
  }),
  problems: Type.Object(
    {
      test_file_max_bytes: Type.Integer({ description: "A stored problem's test input or expected output." }),
      tests_max: Type.Integer({ description: 'Tests of one stored problem.' }),
      upload_max_bytes: Type.Integer({ description: 'A problem as sent: its JSON body or its zip package.' }),
      checker_message_max_bytes: Type.Integer({ description: "A checker's or interactor's message kept in a test's result." }),
    },
    { description: 'Judged runs and stored problems (the account storage figure is account.problem_storage_bytes).' },
  ),
  websocket_runs_per_second_per_connection: Type.Integer(),
});

export const CompilerList = Type.Array(
  Type.Object({
    id: CompilerIdSchema,
    language: Type.Union([Type.String(), Type.Null()]),
    version: Type.Union([Type.String(), Type.Null()], { description: 'The installed toolchain version; null when not installed.' }),
    available: Type.Boolean(),
    piston: Type.Union([Type.String(), Type.Null()], {
      description: "The language name Piston's clients send for it (POST /piston/api/v2/execute); null: not offered there (another id of its version is).",
    }),
    judge0: Type.Union([Type.Integer(), Type.Null()], { description: 'Its Judge0 CE language id (POST /judge0/submissions); null where Judge0 has none.' }),
    libraries: Type.Record(Type.String(), Type.String(), {
      description: 'Libraries a program can use with no install step (numpy, Boost, Gson, ggplot2…): name → the version installed, probed when the image was built. Empty when it has none or is not installed.',
    }),
    compiler_options: Type.Array(Type.String(), {
      description: 'The forms of compiler_options it takes, each a pattern an option must match whole; empty: none (an interpreter, or a compiler without options).',
    }),
    successor: Type.Optional(Type.String({ description: 'Only for a retired identifier (never available): the one to use instead.' })),
  }),
);

const TestWeight = Type.Number({ minimum: 0, description: "The test's weight in the request's score (default 1)." });

/** A stored problem as JSON (POST and PUT /api/v2/problems; a zip package is the other form). */
/** Who sees what of a problem's runs (src/problems/feedback.ts); a write that leaves one out keeps it (a new problem: full, private). */
export const ProblemSettingsFields = {
  feedback: Type.Optional(
    Type.Enum([...FEEDBACK_SETTINGS], {
      description:
        'What widget keys, student keys and other accounts (a public problem) see of a run: full (everything), samples (sample tests whole, the others by verdict only), first_failure (the first failing test by name and verdict), verdict (the verdict and score only). Default full.',
    }),
  ),
  public: Type.Optional(Type.Boolean({ description: "Any account's key may judge against it, under its feedback, billed to the judging account. Default false." })),
};
export const ProblemSettingsBody = Type.Object(ProblemSettingsFields, { additionalProperties: false, minProperties: 1, description: "A problem's settings, changed without a new version." });
export type ProblemSettingsBody = Static<typeof ProblemSettingsBody>;

export const ProblemBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: PROBLEM_LIMITS.nameMaxBytes, description: "The problem's name (default: Untitled problem)." })),
    tests: Type.Array(
      Type.Object(
        {
          name: Type.Optional(Type.String({ description: 'Segments of letters, digits and ._+- joined by / (default: its number from 1).' })),
          input: Utf8Text(PROBLEM_LIMITS.testFileMaxBytes, "The test's standard input."),
          expected_output: Utf8Text(PROBLEM_LIMITS.testFileMaxBytes, 'What the program must print (compared by the checker).'),
          weight: Type.Optional(TestWeight),
          sample: Type.Optional(Type.Boolean({ description: 'A sample test: its content is shown with the problem (others only by size).' })),
        },
        { additionalProperties: false },
      ),
      { minItems: 1, maxItems: PROBLEM_LIMITS.testsMax },
    ),
    checker: Type.Optional(CheckerSchema),
    interactor: Type.Optional(InteractorSchema),
    limits: Type.Optional(
      Type.Object(
        {
          time: Type.Optional(Type.Number({ description: `CPU seconds per test, at most ${RUN_LIMITS.timeoutMs / 1000}.` })),
          memory: Type.Optional(Type.Integer({ description: `KB per test, at most ${RUN_LIMITS.memoryBytes / 1024}.` })),
        },
        { additionalProperties: false },
      ),
    ),
    ...ProblemSettingsFields,
  },
  { additionalProperties: false, description: 'A problem: its tests, checker, interactor and limits.' },
);
export type ProblemBody = Static<typeof ProblemBody>;
