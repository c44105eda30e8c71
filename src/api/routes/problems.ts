import Type from 'typebox';
import { availabilityCache } from '../../compilers/deployment.js';
import { settingCompilers } from '../../judge/settings.js';
import { PROBLEM_LIMITS, PROBLEM_TIME_DEFAULTS, VERIFY_LIMITS } from '../../limits.js';
import { compilerForPackageFile } from '../../problems/compilers.js';
import { ProblemInputError, type ProblemDraft } from '../../problems/draft.js';
import { problemFromJson } from '../../problems/json.js';
import { openPackage } from '../../problems/package.js';
import { FEEDBACK_SETTINGS, type Feedback } from '../../problems/feedback.js';
import { deleteProblem, getProblem, listProblems, saveProblem, setProblemSettings, type ProblemSettings } from '../../problems/store.js';
import { ApiError } from '../errors.js';
import { advanceChecks, checkView, findCheck, startRejudge, startVerification } from '../problem-checks.js';
import { assertOffered, runAdmitter } from '../middleware/admission.js';
import { readRawBody } from '../middleware/json-body.js';
import type { ApiContext, ApiDeps, RouteDef } from '../route.js';
import { ProblemBody, ProblemSettingsBody } from '../schemas.js';

// Stored problems of the calling account: POST (JSON, or a zip package sent as
// application/zip), GET one, GET the list, PUT (the next version), DELETE. Another
// account's problem is a 404, as a missing one is, so ids cannot be probed. Route
// handlers call the domain modules of src/problems.

const ZIP = 'application/zip';
const Dated = Type.String({ format: 'date-time' });

const Limits = Type.Object({ time: Type.Optional(Type.Number({ description: 'CPU seconds per test.' })), memory: Type.Optional(Type.Integer({ description: 'KB per test.' })) });
const Program = Type.Object({
  compiler: Type.String(),
  convention: Type.Enum(['testlib', 'kattis']),
  files: Type.Array(Type.String(), { description: 'The files beside its main source.' }),
  passes: Type.Optional(Type.Integer({ description: "A multi-pass problem's validator or interactor: the most passes a test may take (validation_passes)." })),
});

export const ProblemSummarySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  version: Type.Integer({ description: 'The current version; a PUT makes the next, and a run names the version it ran.' }),
  feedback: Type.Enum([...FEEDBACK_SETTINGS], { description: 'What widget keys, student keys and other accounts see of its runs.' }),
  public: Type.Boolean({ description: "Any account's key may judge against it." }),
  test_count: Type.Integer(),
  data_bytes: Type.Integer({ description: "The current version's test data, each distinct file once." }),
  created_at: Dated,
  updated_at: Dated,
});

export const ProblemSchema = Type.Object({
  ...ProblemSummarySchema.properties,
  limits: Limits,
  time_limit: Type.Object(
    { seconds: Type.Number({ description: 'CPU seconds per test.' }), source: Type.Enum(['stated', 'derived', 'default']) },
    { description: "The time limit its runs have: stated by the package (limits.time_limit, .timelimit, domjudge-problem.ini) or the request, derived by a verification from the accepted example submissions, or else the service's stated default (no measured limit yet)." },
  ),
  example_submissions: Type.Array(
    Type.Object({
      path: Type.String({ description: 'Below submissions/.' }),
      compiler: Type.Union([Type.String(), Type.Null()]),
      refusal: Type.Union([Type.String(), Type.Null()], { description: 'Why it cannot be judged here.' }),
      expected: Type.Array(Type.String(), { description: 'Where its expected verdicts come from, as the package says them.' }),
    }),
    { description: "The package's example submissions, judged by POST /api/v2/problems/{id}/verify." },
  ),
  statement: Type.Optional(Type.Object({ format: Type.Enum(['markdown', 'latex']), text: Type.String() }, { description: "Its statement: Markdown (written in the portal, or a package's problem_statement/problem.md), or a package's LaTeX source." })),
  checker: Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'A built-in comparison with its options, or {"type":"program", compiler, convention, files}.' }),
  interactor: Type.Union([Program, Type.Null()]),
  submit_answer: Type.Optional(Type.Literal(true, { description: 'A submit-answer problem: a submission is its answer files, NAME.out for test NAME.' })),
  include: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()), { description: "Files copied over a submission before it is built, their names by the package format's language code (include/<language>/, include/default/)." })),
  tests: Type.Array(
    Type.Object({
      name: Type.String(),
      sample: Type.Boolean(),
      weight: Type.Number(),
      input_bytes: Type.Integer(),
      expected_output_bytes: Type.Integer(),
      input: Type.Optional(Type.String({ description: 'Samples of at most 100,000 bytes only.' })),
      expected_output: Type.Optional(Type.String({ description: 'Samples of at most 100,000 bytes only.' })),
      interaction: Type.Optional(Type.String({ description: "An interactive or multi-pass problem's sample: its dialogue (data/sample/NAME.interaction), lines starting < (the program reads) and > (it writes), --- between passes." })),
    }),
  ),
});

export const ProblemListSchema = Type.Object({
  problems: Type.Array(ProblemSummarySchema),
  storage: Type.Object({
    used_bytes: Type.Integer({ description: "Test data of the account's problems, each distinct file once." }),
    limit_bytes: Type.Integer({ description: "The plan's figure (problem_storage_bytes)." }),
  }),
});

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const ProblemCheckSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  kind: Type.Enum(['verify', 'rejudge']),
  problem_id: Type.String({ format: 'uuid' }),
  version: Type.Integer(),
  state: Type.Enum(['running', 'done']),
  phase: Type.Integer({ description: 'Verification: 1 while the accepted submissions are measured (no stated limit), 2 while the others run at the limit derived.' }),
  time_limit: Type.Object(
    {
      seconds: Type.Number(),
      source: Type.Enum(['stated', 'derived', 'default']),
      slowest_accepted: Type.Optional(Nullable(Type.Number({ description: "CPU seconds of the slowest accepted submission's slowest test." }))),
      ac_to_time_limit: Type.Optional(Type.Number()),
      time_limit_to_tle: Type.Optional(Type.Number()),
      note: Type.Optional(Type.String()),
    },
    { description: 'Verification: the limit stated, or derived as problemtools does (slowest accepted × ac_to_time_limit, rounded up to time_resolution), stored with the version.' },
  ),
  runs: Type.Array(
    Type.Object({
      path: Type.Optional(Type.String({ description: 'Verification: the example submission, below submissions/.' })),
      previous_id: Type.Optional(Type.String({ description: 'Rejudge: the earlier submission judged again.' })),
      submission_id: Nullable(Type.String({ description: 'The judged submission (GET /api/v2/submissions/{id}); null until admitted.' })),
      state: Type.Enum(['waiting', 'queued', 'running', 'finished', 'failed', 'refused']),
      expected: Type.Optional(Type.Array(Type.String(), { description: 'What the package expects, as it says it.' })),
      verdict: Nullable(Type.String()),
      code: Type.Optional(Nullable(Type.String({ description: 'The format verdict: AC, WA, TLE, RTE, CE, JE.' }))),
      time: Nullable(Type.Number({ description: 'CPU seconds of its slowest test.' })),
      score: Type.Optional(Nullable(Type.Number())),
      mismatches: Type.Optional(Type.Array(Type.String())),
      previous_verdict: Type.Optional(Nullable(Type.String())),
      changed: Type.Optional(Type.Boolean()),
      refusal: Type.Optional(Nullable(Type.String())),
    }),
  ),
  mismatches: Type.Integer({ description: 'Runs judged whose verdict is not the one expected (verify), or changed (rejudge).' }),
  not_judged: Type.Integer({ description: 'Runs that could not be judged (no compiler offered here for the language, a refusal of admission): each says why.' }),
  created_at: Dated,
  finished_at: Nullable(Dated),
});

const notFound = (id: string) => new ApiError(404, 'not_found', `no problem ${id}`);

/** A student's key judges its account's problems; it does not write them. */
function assertNotStudent(ctx: ApiContext): void {
  const auth = ctx.state.auth!;
  if (auth.kind === 'api' && auth.student) throw new ApiError(403, 'student_key', "this is a student key: it judges against the account's problems but cannot change them; use another API key");
}

/** The settings a write gives: JSON fields, or for a zip package the query's ?feedback= and ?public=. */
function settingsOf(ctx: ApiContext, zip: boolean): ProblemSettings {
  if (!zip) {
    const body = ctx.state.body as ProblemBody;
    return { ...(body.feedback !== undefined ? { feedback: body.feedback } : {}), ...(body.public !== undefined ? { public: body.public } : {}) };
  }
  const settings: ProblemSettings = {};
  const feedback = ctx.query['feedback'];
  if (feedback !== undefined) {
    if (typeof feedback !== 'string' || !(FEEDBACK_SETTINGS as readonly string[]).includes(feedback)) throw new ApiError(400, 'invalid_request', `feedback must be one of ${FEEDBACK_SETTINGS.join(', ')}`);
    settings.feedback = feedback as Feedback;
  }
  const pub = ctx.query['public'];
  if (pub !== undefined) {
    if (pub !== 'true' && pub !== 'false') throw new ApiError(400, 'invalid_request', 'public must be true or false');
    settings.public = pub === 'true';
  }
  return settings;
}

/** The problem the request sends, JSON or a zip package, checked; its compilers offered here. */
async function draftOf(ctx: ApiContext, deps: ApiDeps, available: () => Promise<Set<string>>): Promise<{ draft: ProblemDraft; close(): void }> {
  const offered = await available();
  const opened = ctx.request.is(ZIP)
    ? await openPackage(await readRawBody(ctx, PROBLEM_LIMITS.uploadMaxBytes), { compilerFor: compilerForPackageFile(offered, deps.config.RUNBOX_RECIPES_DIR) })
    : { draft: problemFromJson(ctx.state.body as ProblemBody), close: () => {} };
  try {
    for (const compiler of settingCompilers(opened.draft)) assertOffered(compiler, deps.config.RUNBOX_RECIPES_DIR, offered, 'the checker or interactor');
    return opened;
  } catch (err) {
    opened.close();
    throw err;
  }
}

/** A refused problem as its 400. */
async function refusals<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof ProblemInputError) throw new ApiError(400, err.code, err.message);
    throw err;
  }
}

const writeRoute = (method: 'POST' | 'PUT'): RouteDef => ({
  method,
  path: method === 'POST' ? '/api/v2/problems/' : '/api/v2/problems/:id',
  operationId: method === 'POST' ? 'createProblem' : 'replaceProblem',
  summary: method === 'POST' ? 'Store a problem: its tests, checker, interactor and limits.' : "Replace a problem: its next version (runs name the version they ran).",
  description: [
    'The body is JSON (ProblemBody) or a zip package sent as application/zip: the ICPC/Kattis layout (problem.yaml, data/sample/*.in + .ans,',
    'data/secret/*.in + .ans, output_validators/<name>/) or tests/NAME.in + tests/NAME.out.',
    `A test file may hold at most ${PROBLEM_LIMITS.testFileMaxBytes} bytes; the account's problems together at most its plan's problem_storage_bytes.`,
    'feedback and public (JSON fields; for a zip package the query parameters ?feedback= and ?public=) say who sees what of its runs; a PUT without them keeps them.',
    'A student key may not write problems (403 student_key).',
    'A refused problem (400: invalid_problem, invalid_package, test_file_too_large, problem_storage_full, compiler_unavailable) stores nothing.',
    `An account makes at most ${PROBLEM_LIMITS.writesPerMinute} problem writes (create, replace, delete) a minute; past that, 429 rate_limited with Retry-After.`,
  ].join(' '),
  auth: 'key',
  maintenance: true,
  problemWrite: true,
  body: ProblemBody,
  bodyMaxBytes: PROBLEM_LIMITS.uploadMaxBytes,
  otherBodies: { [ZIP]: { description: 'A problem package (zip).', maxBytes: PROBLEM_LIMITS.uploadMaxBytes } },
  responses: { [method === 'POST' ? 201 : 200]: { description: 'The stored problem.', schema: ProblemSchema } },
  errors: [400, 401, 403, ...(method === 'PUT' ? [404] : []), 405, 406, 429, 500, 503],
  handler: (deps) => {
    const available = availabilityCache(deps.db, deps.config);
    return async (ctx) => {
      const auth = ctx.state.auth!;
      assertNotStudent(ctx);
      const id = method === 'PUT' ? String(ctx.params['id'] ?? '') : undefined;
      const rejudge = method === 'PUT' ? rejudgeCount(ctx.query['rejudge']) : 0;
      const settings = settingsOf(ctx, ctx.request.is(ZIP) !== false);
      const view = await refusals(async () => {
        const { draft, close } = await draftOf(ctx, deps, available);
        try {
          return await saveProblem(deps.db, auth.accountId, draft, id, settings);
        } finally {
          close();
        }
      });
      if (!view) throw notFound(id!);
      // The account's submissions of the earlier version, judged again on this one in the background.
      if (rejudge > 0) {
        const check = await startRejudge(deps.db, auth, view.id, view.version, rejudge);
        if (check) ctx.set('Link', `</api/v2/problems/${view.id}/rejudge>; rel="rejudge"`);
      }
      ctx.status = method === 'POST' ? 201 : 200;
      if (method === 'POST') ctx.set('Location', `/api/v2/problems/${view.id}`);
      ctx.body = view;
    };
  },
});

/** PUT's ?rejudge=N: the newest N submissions of the earlier version, at most VERIFY_LIMITS.rejudgeMax. */
function rejudgeCount(value: unknown): number {
  if (value === undefined) return 0;
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || n < 1 || n > VERIFY_LIMITS.rejudgeMax) {
    throw new ApiError(400, 'invalid_request', `rejudge must be a whole number from 1 to ${VERIFY_LIMITS.rejudgeMax} (the newest submissions of the earlier version to judge again)`);
  }
  return n;
}

/** GET of a problem's newest check of `kind`, advanced first. */
const checkRoute = (kind: 'verify' | 'rejudge'): RouteDef => ({
  method: 'GET',
  path: `/api/v2/problems/:id/${kind}`,
  operationId: kind === 'verify' ? 'getProblemVerification' : 'getProblemRejudge',
  summary: kind === 'verify' ? "The problem's newest verification: its progress while it runs, then its report." : 'The newest rejudge of the problem (PUT ?rejudge=N): the verdicts that changed.',
  auth: 'key',
  responses: { 200: { description: 'The check.', schema: ProblemCheckSchema } },
  errors: [401, 403, 404, 405, 406, 500],
  handler: (deps) => {
    const admit = runAdmitter(deps);
    return async (ctx) => {
      const id = String(ctx.params['id'] ?? '');
      const check = await findCheck(deps.db, ctx.state.auth!.accountId, id, kind);
      if (!check) throw new ApiError(404, 'not_found', `problem ${id} has no ${kind === 'verify' ? 'verification' : 'rejudge'}`);
      await advanceChecks(deps.db, admit, deps.config.RUNBOX_RECIPES_DIR, check);
      ctx.body = await checkView(deps.db, check);
    };
  },
});

export const problemRoutes: RouteDef[] = [
  writeRoute('POST'),
  {
    method: 'GET',
    path: '/api/v2/problems/',
    operationId: 'listProblems',
    summary: "The calling account's problems, newest first, and the test data they keep.",
    auth: 'key',
    responses: { 200: { description: 'The problems.', schema: ProblemListSchema } },
    errors: [401, 403, 405, 406, 500],
    handler: (deps) => async (ctx) => {
      const list = await listProblems(deps.db, ctx.state.auth!.accountId);
      ctx.body = list;
    },
  },
  {
    method: 'GET',
    path: '/api/v2/problems/:id',
    operationId: 'getProblem',
    summary: "A problem of the calling account (or another account's public one), its current version's tests (samples' content shown, others by size).",
    auth: 'key',
    responses: { 200: { description: 'The problem.', schema: ProblemSchema } },
    errors: [401, 403, 404, 405, 406, 500],
    handler: (deps) => async (ctx) => {
      const id = String(ctx.params['id'] ?? '');
      const view = await getProblem(deps.db, ctx.state.auth!.accountId, id, 'and public');
      if (!view) throw notFound(id);
      ctx.body = view;
    },
  },
  writeRoute('PUT'),
  {
    method: 'POST',
    path: '/api/v2/problems/:id/verify',
    operationId: 'verifyProblem',
    summary: "Judge every example submission of the problem's package (submissions/<verdict>/), as problemtools' verifyproblem does.",
    description: [
      "Each example submission is an ordinary judged run (billed, and bounded by the plan's limits, as any), queued in the background; GET /api/v2/problems/{id}/verify shows the progress, then the report:",
      'per submission the verdict expected, the one given, its time (slowest test) and the mismatches.',
      `Without a stated time limit, the accepted submissions run first (at ${PROBLEM_TIME_DEFAULTS.measureSeconds} s), the limit derived from the slowest of them is stored with the version, and the others run at it.`,
      '400 no_example_submissions: the package kept none.',
    ].join(' '),
    auth: 'key',
    maintenance: true,
    responses: { 202: { description: 'Started: the check as it stands.', schema: ProblemCheckSchema } },
    errors: [400, 401, 403, 404, 405, 406, 500, 503],
    handler: (deps) => {
      const admit = runAdmitter(deps);
      return async (ctx) => {
        const id = String(ctx.params['id'] ?? '');
        const auth = ctx.state.auth!;
        const check = await startVerification(deps.db, auth, id);
        if (!check) throw notFound(id);
        await advanceChecks(deps.db, admit, deps.config.RUNBOX_RECIPES_DIR, check);
        ctx.status = 202;
        ctx.set('Location', `/api/v2/problems/${id}/verify`);
        ctx.body = await checkView(deps.db, check);
      };
    },
  },
  checkRoute('verify'),
  checkRoute('rejudge'),
  {
    method: 'PATCH',
    path: '/api/v2/problems/:id',
    operationId: 'updateProblemSettings',
    summary: "Change a problem's feedback or public setting (no new version; results already stored are shown under the new setting).",
    auth: 'key',
    maintenance: true,
    problemWrite: true,
    body: ProblemSettingsBody,
    responses: { 200: { description: 'The problem.', schema: ProblemSchema } },
    errors: [400, 401, 403, 404, 405, 406, 429, 500, 503],
    handler: (deps) => async (ctx) => {
      assertNotStudent(ctx);
      const id = String(ctx.params['id'] ?? '');
      const view = await setProblemSettings(deps.db, ctx.state.auth!.accountId, id, ctx.state.body as ProblemSettingsBody);
      if (!view) throw notFound(id);
      ctx.body = view;
    },
  },
  {
    method: 'DELETE',
    path: '/api/v2/problems/:id',
    operationId: 'deleteProblem',
    summary: 'Delete a problem (runs already queued still finish); its test data goes once nothing needs it.',
    description: `Counted with the account's other problem writes (at most ${PROBLEM_LIMITS.writesPerMinute} a minute; past that, 429 rate_limited with Retry-After).`,
    auth: 'key',
    maintenance: true,
    problemWrite: true,
    responses: { 204: { description: 'Deleted.', contentType: 'text/plain' } },
    errors: [401, 403, 404, 405, 406, 429, 500, 503],
    handler: (deps) => async (ctx) => {
      assertNotStudent(ctx);
      const id = String(ctx.params['id'] ?? '');
      if (!(await deleteProblem(deps.db, ctx.state.auth!.accountId, id))) throw notFound(id);
      ctx.status = 204;
    },
  },
];
