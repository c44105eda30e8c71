import type Koa from 'koa';
import Type from 'typebox';
import { ApiError } from '../../api/errors.js';
import { runAdmitter, type AdmitRun } from '../../api/middleware/admission.js';
import type { KeyCache } from '../../accounts/key-cache.js';
import { apiKeyContext, keyFromHeader } from '../../api/middleware/authenticate.js';
import { keyAsker, resultFor, type Asker } from '../../problems/feedback.js';
import { readJsonBody } from '../../api/middleware/json-body.js';
import { waitForRunEnd } from '../../api/live.js';
import type { ApiContext, RouteDef } from '../../api/route.js';
import type { KeyContext } from '../../accounts/accounts.js';
import { deploymentAvailability } from '../../compilers/deployment.js';
import type { Db } from '../../db/connect.js';
import type { RunResult } from '../../result.js';
import type { CompatApi } from '../mount.js';
import { compilerOfLanguage, judge0Languages } from './languages.js';
import { Judge0BatchRequest, Judge0FieldErrors, judge0Run, Judge0SubmissionRequest } from './request.js';
import { JUDGE0_STATUSES } from './statuses.js';
import { judge0Submission, parseFields, type Judge0Kept, type Judge0Source } from './view.js';
import { KEY_CARRIERS } from '../../accounts/errors.js';
import { inSnapshot } from '../../api/submission-view.js';
import { expiredMessage, expiredSubmissions, type ExpiredSubmission } from '../../retention/expired.js';
import { UUID } from '../../util/uuid.js';

// Judge0 CE (1.13, docs/api) at /judge0/: languages, statuses, submissions (one or a
// batch), looked up by token. A submission is a runbox run of mode 'judge0', admitted
// and limited like any; its token is the submission id, so another account's token
// answers 404 like an unknown one. ?wait=true waits for the end like a synchronous run.
// A token the retention purge deleted answers 410 (in a batch: {token, error}).

const TAGS = ['Judge0 CE compatible'];
/** Judge0's MAX_SUBMISSION_BATCH_SIZE default. */
export const MAX_BATCH = 20;

const Judge0Error = Type.Union([Type.Object({ error: Type.String() }), Type.Record(Type.String(), Type.Array(Type.String()))], {
  description: '{"error": message}, or for validation (422) {"field": ["message", …]}.',
});
const Judge0SubmissionView = Type.Record(Type.String(), Type.Unknown(), {
  description: 'The requested fields (default: token, time, memory, stdout, stderr, compile_output, message, status).',
});

const flag = (ctx: Koa.Context, name: string) => ctx.query[name] === 'true';

/** X-Auth-Token (Judge0's header) or Authorization. */
async function authenticate(ctx: Koa.Context, db: Db, keys: KeyCache | undefined): Promise<KeyContext> {
  const key = ctx.get('X-Auth-Token').trim() || keyFromHeader(ctx.get('Authorization'));
  return apiKeyContext(db, key, keys, KEY_CARRIERS.judge0);
}

function requestedFields(ctx: Koa.Context): string[] {
  const raw = ctx.query['fields'];
  const { fields, invalid } = parseFields(typeof raw === 'string' ? raw : undefined);
  if (invalid.length > 0) throw new ApiError(400, 'invalid_fields', `invalid fields: [${invalid.join(', ')}]`);
  return fields;
}

/** The caller's submissions among these tokens, and the ones the retention purged, read in one snapshot. */
async function lookup(db: Db, asker: Asker, ids: string[]): Promise<{ found: Map<string, Judge0Source>; expired: Map<string, ExpiredSubmission> }> {
  return inSnapshot(db, async (trx) => {
    const found = await sources(trx, asker, ids);
    const missing = ids.filter((id) => !found.has(id));
    return { found, expired: missing.length > 0 ? await expiredSubmissions(trx, asker.accountId, missing) : new Map() };
  });
}

/** The caller's submissions among these ids, their results as the caller may see them (src/problems/feedback.ts). */
async function sources(db: Db, asker: Asker, ids: string[]): Promise<Map<string, Judge0Source>> {
  const wanted = ids.filter((id) => UUID.test(id));
  if (wanted.length === 0) return new Map();
  const rows = await db
    .selectFrom('submissions')
    .select(['id', 'compiler', 'state', 'code', 'input', 'created_at', 'finished_at', 'result', 'compat'])
    .where('id', 'in', wanted)
    .where('account_id', '=', asker.accountId)
    .execute();
  const shown = await Promise.all(rows.map(async (r) => (r.result ? resultFor(db, asker, r.result as RunResult) : null)));
  return new Map(
    rows.map((r, i) => [
      r.id,
      { ...r, result: shown[i] ?? null, compat: r.compat as unknown as Judge0Kept | null } satisfies Judge0Source,
    ]),
  );
}

/** Admits a Judge0 submission; an uninstalled language reads as Judge0's unknown language. */
async function admitOne(admit: AdmitRun, auth: KeyContext, body: unknown, base64: boolean, recipesDir: string): Promise<string> {
  const { run } = await judge0Run(body, base64, recipesDir);
  try {
    return (await admit(auth, run, 'judge0')).id;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'compiler_unavailable') {
      const languageId = String((run.compat as { language_id: number }).language_id);
      // A retired language says what replaces it; any other reads as Judge0's unknown language.
      const successor = compilerOfLanguage(Number(languageId), recipesDir)?.retired?.successor;
      throw new Judge0FieldErrors({
        language_id: [successor ? `language with id ${languageId} is retired: ${err.message}` : `language with id ${languageId} doesn't exist`],
      });
    }
    // The time limits are the fields a client can lower to fit the plan's sandbox time.
    if (err instanceof ApiError && err.code === 'too_much_sandbox_time') throw new Judge0FieldErrors({ wall_time_limit: [err.message] });
    throw err;
  }
}

const languagesRoute: RouteDef = {
  method: 'GET',
  path: '/judge0/languages',
  operationId: 'judge0Languages',
  tags: TAGS,
  summary: "The installed compilers as Judge0 CE's languages, with Judge0 CE's ids.",
  auth: 'none',
  responses: { 200: { description: 'The languages.', schema: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String() })) } },
  errors: [404, 405, 500],
  errorBody: Judge0Error,
  handler: (deps) => async (ctx) => {
    ctx.body = judge0Languages(await deploymentAvailability(deps.db, deps.config));
  },
};

const statusesRoute: RouteDef = {
  method: 'GET',
  path: '/judge0/statuses',
  operationId: 'judge0Statuses',
  tags: TAGS,
  summary: "Judge0's status ids and descriptions.",
  auth: 'none',
  responses: { 200: { description: 'The statuses.', schema: Type.Array(Type.Object({ id: Type.Integer(), description: Type.String() })) } },
  errors: [404, 405],
  errorBody: Judge0Error,
  handler: () => async (ctx) => {
    ctx.body = JUDGE0_STATUSES;
  },
};

const createRoute: RouteDef = {
  method: 'POST',
  path: '/judge0/submissions',
  operationId: 'judge0CreateSubmission',
  tags: TAGS,
  summary: 'Create a submission: 201 {token}, or with ?wait=true the finished submission.',
  description:
    'Query: base64_encoded (true: source_code, stdin and expected_output are Base64, and so are the answered text fields), wait, fields. Key in X-Auth-Token or Authorization. 429 answers carry Retry-After.',
  auth: 'key',
  maintenance: true,
  body: Judge0SubmissionRequest,
  responses: { 201: { description: 'The token, or the finished submission with wait=true.', schema: Judge0SubmissionView } },
  errors: [400, 401, 403, 405, 422, 429, 500, 503],
  errorBody: Judge0Error,
  handler: (deps) => {
    const admit = runAdmitter(deps);
    return async (ctx) => {
      const auth = await authenticate(ctx, deps.db, deps.keys);
      const base64 = flag(ctx, 'base64_encoded');
      const wait = flag(ctx, 'wait');
      const fields = wait ? requestedFields(ctx) : ['token'];
      const body = await readJsonBody(ctx);
      const id = await admitOne(admit, auth, body, base64, deps.config.RUNBOX_RECIPES_DIR);
      if (wait) {
        if (!deps.live) throw new ApiError(500, 'internal_error', 'waiting for a result is not available on this API process');
        if (!(await waitForRunEnd(ctx.res, deps.live, id, deps.db, deps.log))) {
          ctx.respond = false;
          return;
        }
      }
      const found = wait ? (await sources(deps.db, keyAsker(auth), [id])).get(id) : undefined;
      ctx.status = 201;
      ctx.body = found ? judge0Submission(found, { base64, fields, recipesDir: deps.config.RUNBOX_RECIPES_DIR }) : { token: id };
    };
  },
};

const batchCreateRoute: RouteDef = {
  method: 'POST',
  path: '/judge0/submissions/batch',
  operationId: 'judge0CreateBatch',
  tags: TAGS,
  summary: `Create up to ${MAX_BATCH} submissions: each answered with its token or its validation errors.`,
  auth: 'key',
  maintenance: true,
  body: Judge0BatchRequest,
  responses: { 201: { description: 'One entry per submission, in order: {token} or {"field": ["message"]}.', schema: Type.Array(Judge0SubmissionView) } },
  errors: [400, 401, 403, 405, 422, 429, 500, 503],
  errorBody: Judge0Error,
  handler: (deps) => {
    const admit = runAdmitter(deps);
    return async (ctx) => {
      const auth = await authenticate(ctx, deps.db, deps.keys);
      const base64 = flag(ctx, 'base64_encoded');
      const body = (await readJsonBody(ctx)) as { submissions?: unknown };
      const list = typeof body === 'object' && body !== null && Array.isArray(body.submissions) ? body.submissions : [];
      if (list.length > MAX_BATCH) throw new ApiError(400, 'batch_too_large', `number of submissions in a batch should be less than or equal to ${MAX_BATCH}`);
      if (list.length === 0) throw new ApiError(400, 'batch_empty', 'there should be at least one submission in a batch');
      const answers: Record<string, unknown>[] = [];
      let admitted = 0;
      for (const item of list) {
        try {
          answers.push({ token: await admitOne(admit, auth, item, base64, deps.config.RUNBOX_RECIPES_DIR) });
          admitted++;
        } catch (err) {
          if (err instanceof Judge0FieldErrors) answers.push(err.fields);
          // A limit reached part way: the earlier submissions stand, the rest are refused.
          else if (err instanceof ApiError && err.status === 429 && admitted > 0) answers.push({ error: err.message });
          else throw err;
        }
      }
      ctx.status = admitted > 0 ? 201 : 422;
      ctx.body = answers;
    };
  },
};

const batchShowRoute: RouteDef = {
  method: 'GET',
  path: '/judge0/submissions/batch',
  operationId: 'judge0GetBatch',
  tags: TAGS,
  summary: 'Several submissions by token (?tokens=a,b,c); null for a token that is not the caller\'s, {token, error} for one the retention deleted.',
  auth: 'key',
  responses: { 200: { description: 'The submissions, in the order of the tokens.', schema: Type.Object({ submissions: Type.Array(Type.Union([Judge0SubmissionView, Type.Null()])) }) } },
  errors: [400, 401, 403, 405, 500],
  errorBody: Judge0Error,
  handler: (deps) => async (ctx) => {
    const auth = await authenticate(ctx, deps.db, deps.keys);
    const raw = ctx.get('tokens') || (typeof ctx.query['tokens'] === 'string' ? ctx.query['tokens'] : '');
    const tokens = raw.trim().split(',').map((t) => t.trim()).filter((t) => t !== '');
    if (tokens.length > MAX_BATCH) throw new ApiError(400, 'batch_too_large', `number of submissions in a batch should be less than or equal to ${MAX_BATCH}`);
    if (tokens.length === 0) throw new ApiError(400, 'batch_empty', 'there should be at least one submission in a batch');
    const options = { base64: flag(ctx, 'base64_encoded'), fields: requestedFields(ctx), recipesDir: deps.config.RUNBOX_RECIPES_DIR };
    const { found, expired } = await lookup(deps.db, keyAsker(auth), tokens);
    const days = deps.config.RUNBOX_RETENTION_DAYS;
    ctx.body = {
      submissions: tokens.map((t) =>
        found.has(t) ? judge0Submission(found.get(t)!, options) : expired.has(t) ? { token: t, error: expiredMessage(expired.get(t)!, days) } : null,
      ),
    };
  },
};

const showRoute: RouteDef = {
  method: 'GET',
  path: '/judge0/submissions/:token',
  operationId: 'judge0GetSubmission',
  tags: TAGS,
  summary: 'A submission by token (?base64_encoded=, ?fields=); another account\'s token answers 404, one the retention deleted 410.',
  auth: 'key',
  responses: { 200: { description: 'The submission.', schema: Judge0SubmissionView } },
  errors: [400, 401, 403, 404, 405, 410, 500],
  errorBody: Judge0Error,
  handler: (deps) => async (ctx: ApiContext) => {
    const auth = await authenticate(ctx, deps.db, deps.keys);
    const token = String(ctx.params['token'] ?? '');
    const options = { base64: flag(ctx, 'base64_encoded'), fields: requestedFields(ctx), recipesDir: deps.config.RUNBOX_RECIPES_DIR };
    const { found, expired } = await lookup(deps.db, keyAsker(auth), [token]);
    const gone = expired.get(token);
    if (gone) throw new ApiError(410, 'submission_expired', expiredMessage(gone, deps.config.RUNBOX_RETENTION_DAYS));
    if (!found.has(token)) throw new ApiError(404, 'not_found', 'submission not found');
    ctx.body = judge0Submission(found.get(token)!, options);
  },
};

function renderError(ctx: Koa.Context, err: ApiError): void {
  ctx.status = err.status;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = err instanceof Judge0FieldErrors ? err.fields : { error: err.message };
}

export const judge0Api: CompatApi = {
  prefix: '/judge0',
  // The batch paths before /submissions/:token, which would take "batch" as a token.
  routes: [languagesRoute, statusesRoute, createRoute, batchCreateRoute, batchShowRoute, showRoute],
  // Judge0's clients write the paths with and without a trailing slash.
  pathsOf: (route) => [route.path, `${route.path}/`],
  renderError,
  loggedPath: (path) => path,
};

