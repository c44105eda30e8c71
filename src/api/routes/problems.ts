import Type from 'typebox';
import { availabilityCache } from '../../compilers/deployment.js';
import { settingCompilers } from '../../judge/settings.js';
import { PROBLEM_LIMITS } from '../../limits.js';
import { compilerForPackageFile } from '../../problems/compilers.js';
import { ProblemInputError, type ProblemDraft } from '../../problems/draft.js';
import { problemFromJson } from '../../problems/json.js';
import { openPackage } from '../../problems/package.js';
import { deleteProblem, getProblem, listProblems, saveProblem } from '../../problems/store.js';
import { ApiError } from '../errors.js';
import { assertOffered } from '../middleware/admission.js';
import { readRawBody } from '../middleware/json-body.js';
import type { ApiContext, ApiDeps, RouteDef } from '../route.js';
import { ProblemBody } from '../schemas.js';

// Stored problems of the calling account: POST (JSON, or a zip package sent as
// application/zip), GET one, GET the list, PUT (the next version), DELETE. Another
// account's problem is a 404, as a missing one is, so ids cannot be probed. Route
// handlers call the domain modules of src/problems.

const ZIP = 'application/zip';
const Dated = Type.String({ format: 'date-time' });

const Limits = Type.Object({ time: Type.Optional(Type.Number({ description: 'CPU seconds per test.' })), memory: Type.Optional(Type.Integer({ description: 'KB per test.' })) });
const Program = Type.Object({ compiler: Type.String(), convention: Type.Enum(['testlib', 'kattis']), files: Type.Array(Type.String(), { description: 'The files beside its main source.' }) });

export const ProblemSummarySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  version: Type.Integer({ description: 'The current version; a PUT makes the next, and a run names the version it ran.' }),
  test_count: Type.Integer(),
  data_bytes: Type.Integer({ description: "The current version's test data, each distinct file once." }),
  created_at: Dated,
  updated_at: Dated,
});

export const ProblemSchema = Type.Object({
  ...ProblemSummarySchema.properties,
  limits: Limits,
  statement: Type.Optional(Type.Object({ format: Type.Enum(['markdown', 'latex']), text: Type.String() }, { description: "Its statement: Markdown (written in the portal, or a package's problem_statement/problem.md), or a package's LaTeX source." })),
  checker: Type.Object({ type: Type.String() }, { additionalProperties: true, description: 'A built-in comparison with its options, or {"type":"program", compiler, convention, files}.' }),
  interactor: Type.Union([Program, Type.Null()]),
  tests: Type.Array(
    Type.Object({
      name: Type.String(),
      sample: Type.Boolean(),
      weight: Type.Number(),
      input_bytes: Type.Integer(),
      expected_output_bytes: Type.Integer(),
      input: Type.Optional(Type.String({ description: 'Samples of at most 100,000 bytes only.' })),
      expected_output: Type.Optional(Type.String({ description: 'Samples of at most 100,000 bytes only.' })),
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

const notFound = (id: string) => new ApiError(404, 'not_found', `no problem ${id}`);

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
      const id = method === 'PUT' ? String(ctx.params['id'] ?? '') : undefined;
      const view = await refusals(async () => {
        const { draft, close } = await draftOf(ctx, deps, available);
        try {
          return await saveProblem(deps.db, auth.accountId, draft, id);
        } finally {
          close();
        }
      });
      if (!view) throw notFound(id!);
      ctx.status = method === 'POST' ? 201 : 200;
      if (method === 'POST') ctx.set('Location', `/api/v2/problems/${view.id}`);
      ctx.body = view;
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
    summary: "A problem of the calling account, its current version's tests (samples' content shown, others by size).",
    auth: 'key',
    responses: { 200: { description: 'The problem.', schema: ProblemSchema } },
    errors: [401, 403, 404, 405, 406, 500],
    handler: (deps) => async (ctx) => {
      const id = String(ctx.params['id'] ?? '');
      const view = await getProblem(deps.db, ctx.state.auth!.accountId, id);
      if (!view) throw notFound(id);
      ctx.body = view;
    },
  },
  writeRoute('PUT'),
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
      const id = String(ctx.params['id'] ?? '');
      if (!(await deleteProblem(deps.db, ctx.state.auth!.accountId, id))) throw notFound(id);
      ctx.status = 204;
    },
  },
];
