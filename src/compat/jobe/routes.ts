import type Koa from 'koa';
import { keyAsker } from '../../problems/feedback.js';
import Type from 'typebox';
import { KEY_CARRIERS } from '../../accounts/errors.js';
import { ApiError } from '../../api/errors.js';
import { storedResult, waitForRunEnd } from '../../api/live.js';
import { runAdmitter } from '../../api/middleware/admission.js';
import { apiKeyContext, keyFromHeader } from '../../api/middleware/authenticate.js';
import { readJsonBody } from '../../api/middleware/json-body.js';
import type { ApiDeps, RouteDef } from '../../api/route.js';
import { compilerEntry } from '../../compilers/catalogue.js';
import { deploymentAvailability } from '../../compilers/deployment.js';
import { JOBE_FILE_CACHE, JOBE_SLOT_WAIT, PROGRAM_LIMITS } from '../../limits.js';
import type { CompatApi } from '../mount.js';
import { hasJobeFile, putJobeFile, readJobeFiles } from './files.js';
import { jobeLanguages } from './languages.js';
import { JOBE_OUTCOMES, JobeRunResult, jobeResult, notRunResult } from './outcome.js';
import { JobeRunRequest, jobeRun, withFiles } from './request.js';

// Jobe (trampgeek/jobe, the server of Moodle's CodeRunner) at /jobe/index.php/restapi/:
// languages, runs and its file cache. A run is a synchronous runbox run of mode 'jobe':
// admitted, counted and limited like POST /api/v2/run-code-sync/, answered in Jobe's
// shape with Jobe's outcome codes. The key comes in Jobe's X-API-KEY header (or
// Authorization); Jobe answers a missing or unknown key with 403 and its errors as a
// JSON string, and so does this route. A run refused for want of a free slot is Jobe's
// "server overload" outcome (21), which CodeRunner retries; the account's other limits
// are 429s, as Jobe's throttle answers.

const TAGS = ['Jobe compatible'];
const BASE = '/jobe/index.php/restapi';
const JobeError = Type.String({ description: "Jobe's error: a JSON string." });

const JobeLanguageList = Type.Array(Type.Tuple([Type.String(), Type.String()]), { description: '[language_id, version] pairs.' });

const availableLanguages = (deps: ApiDeps) => async () => jobeLanguages(await deploymentAvailability(deps.db, deps.config));

async function jobeCaller(ctx: Koa.Context, deps: ApiDeps) {
  const key = ctx.get('X-API-KEY').trim() || keyFromHeader(ctx.get('Authorization'));
  return apiKeyContext(deps.db, key, deps.keys, KEY_CARRIERS.jobe);
}

export const jobeLanguagesRoute: RouteDef = {
  method: 'GET',
  path: `${BASE}/languages`,
  operationId: 'jobeLanguages',
  tags: TAGS,
  summary: "Jobe's languages: each Jobe id an installed compiler serves, with its version.",
  auth: 'none',
  responses: { 200: { description: 'The languages.', schema: JobeLanguageList } },
  errors: [404, 405, 500],
  errorBody: JobeError,
  handler: (deps) => {
    const languages = availableLanguages(deps);
    return async (ctx) => {
      ctx.body = (await languages()).map((l) => [l.id, l.version]);
    };
  },
};

export const jobeRunsRoute: RouteDef = {
  method: 'POST',
  path: `${BASE}/runs`,
  operationId: 'jobeRuns',
  tags: TAGS,
  summary: 'Run code the way Jobe does and answer with its result.',
  description: [
    "Jobe's submit_run: {\"run_spec\": {language_id, sourcecode, sourcefilename, input, file_list, parameters}}. The key goes in",
    'X-API-KEY (or Authorization). Always answered at once (200, never 202). A file_list naming a file not in the cache is 404,',
    'as Jobe answers it, so that CodeRunner PUTs its files and tries again. cputime above the service\'s limit is refused (400);',
    'memorylimit is clamped to it. A compile option the compiler does not take is outcome 11 with the reason in cmpinfo;',
    'interpreterargs are refused. Counted and limited like a synchronous run; one that finds no free slot waits for one (up to',
    `${JOBE_SLOT_WAIT.waitMs / 1000} s, as Jobe waits for a free user) before it is outcome 21, server overload.`,
  ].join(' '),
  auth: 'key',
  maintenance: true,
  body: JobeRunRequest,
  responses: { 200: { description: "The result in Jobe's shape.", schema: JobeRunResult } },
  errors: [400, 403, 404, 405, 429, 500, 503],
  errorBody: JobeError,
  handler: (deps) => {
    const languages = availableLanguages(deps);
    const admit = runAdmitter(deps);
    return async (ctx) => {
      const live = deps.live;
      if (!live) throw new ApiError(500, 'internal_error', 'synchronous runs are not available on this API process');
      const auth = await jobeCaller(ctx, deps);
      const job = jobeRun(await readJsonBody(ctx), await languages(), (id) => compilerEntry(id, deps.config.RUNBOX_RECIPES_DIR));
      if (job.refusedOption !== undefined) {
        ctx.body = notRunResult(JOBE_OUTCOMES.compilationError, `compiler option ${job.refusedOption}`);
        return;
      }
      const files = await readJobeFiles(deps.db, auth.accountId, job.fileRefs);
      if (files === null) throw new ApiError(404, 'file_not_found', 'One or more of the specified files is missing/unavailable');
      const admitted = await admitWaiting(() => admit(auth, withFiles(job, files), 'jobe'));
      if (!admitted) {
        // No slot came free in time: Jobe's "no free Jobe user", which its clients retry.
        ctx.body = notRunResult(JOBE_OUTCOMES.serverOverload);
        return;
      }
      const { id, admittedAt } = admitted;
      if (!(await waitForRunEnd(ctx.res, live, id, deps.db, deps.log, admittedAt))) {
        ctx.respond = false;
        return;
      }
      ctx.set('X-Submission-Id', id);
      ctx.body = jobeResult(await storedResult(deps.db, id, keyAsker(auth), live));
    };
  },
};

/** Admits the run, waiting for a free slot as Jobe waits for a free user (JOBE_SLOT_WAIT); null when none came free. */
async function admitWaiting<T>(admit: () => Promise<T>): Promise<T | null> {
  const until = Date.now() + JOBE_SLOT_WAIT.waitMs;
  for (;;) {
    try {
      return await admit();
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'too_many_running')) throw err;
      if (Date.now() + JOBE_SLOT_WAIT.retryMs > until) return null;
      await new Promise((r) => setTimeout(r, JOBE_SLOT_WAIT.retryMs));
    }
  }
}

const FILE_ID = new RegExp(`^[A-Za-z0-9]{1,${JOBE_FILE_CACHE.idMaxLength}}$`);

function fileId(ctx: Koa.Context): string {
  const id = ctx.params['id'];
  if (typeof id !== 'string' || !FILE_ID.test(id)) throw new ApiError(400, 'invalid_request', 'No file id in URL');
  return id;
}

export const jobePutFileRoute: RouteDef = {
  method: 'PUT',
  path: `${BASE}/files/:id`,
  operationId: 'jobePutFile',
  tags: TAGS,
  summary: "Jobe's put_file: stores a support file in the account's file cache under an id of the client's.",
  description: `Body {"file_contents": base64}; at most ${JOBE_FILE_CACHE.fileMaxBytes} bytes decoded. A cache: past ${JOBE_FILE_CACHE.filesPerAccount} files or ${JOBE_FILE_CACHE.bytesPerAccount} bytes an account's least recently used files go, and one unused for ${JOBE_FILE_CACHE.keepHours} hours. Answers 204.`,
  auth: 'key',
  body: Type.Object({ file_contents: Type.String() }),
  responses: { 204: { description: 'Stored.' } },
  errors: [400, 403, 405, 500],
  errorBody: JobeError,
  handler: (deps) => async (ctx) => {
    const auth = await jobeCaller(ctx, deps);
    const id = fileId(ctx);
    const body = await readJsonBody(ctx, { maxBytes: Math.ceil((JOBE_FILE_CACHE.fileMaxBytes * 4) / 3) + 4096 });
    const contents = (body as { file_contents?: unknown } | null)?.file_contents;
    if (typeof body !== 'object' || body === null || typeof contents !== 'string') throw new ApiError(400, 'invalid_request', 'put: missing file_contents parameter');
    const bytes = strictBase64(contents);
    if (!bytes) throw new ApiError(400, 'invalid_request', `put: contents of file ${id} are not valid base-64`);
    if (bytes.length > Math.min(JOBE_FILE_CACHE.fileMaxBytes, PROGRAM_LIMITS.filesMaxBytes)) {
      throw new ApiError(400, 'invalid_request', `put: file ${id} is ${bytes.length} bytes; at most ${JOBE_FILE_CACHE.fileMaxBytes}`);
    }
    await putJobeFile(deps.db, auth.accountId, id, bytes);
    ctx.status = 204;
  },
};

export const jobeCheckFileRoute: RouteDef = {
  method: 'HEAD',
  path: `${BASE}/files/:id`,
  operationId: 'jobeCheckFile',
  tags: TAGS,
  summary: "Jobe's check_file: 204 when the account's cache holds the file, 404 when not.",
  auth: 'key',
  responses: { 204: { description: 'The cache holds it.' } },
  errors: [400, 403, 404, 405],
  errorBody: JobeError,
  handler: (deps) => async (ctx) => {
    const auth = await jobeCaller(ctx, deps);
    const id = fileId(ctx);
    if (!(await hasJobeFile(deps.db, auth.accountId, id))) throw new ApiError(404, 'not_found', `head: file ${id} not found`);
    ctx.status = 204;
  },
};

/** Base64 as PHP's base64_decode(…, true) takes it: the alphabet and padding only (white space aside). */
function strictBase64(text: string): Buffer | undefined {
  const compact = text.replace(/[\s]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) return undefined;
  return Buffer.from(compact, 'base64');
}

function renderError(ctx: Koa.Context, err: ApiError): void {
  // Jobe answers a missing or unknown key with 403 (its Throttle filter), and every error as a JSON string.
  const keyRefused = err.status === 401;
  ctx.status = keyRefused ? 403 : err.status;
  for (const [name, value] of Object.entries(err.headers)) if (name !== 'WWW-Authenticate') ctx.set(name, value);
  if (ctx.method === 'HEAD') {
    // A null body would make Koa answer 204; HEAD sends no body whatever is set.
    ctx.body = '';
    return;
  }
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(keyRefused && err.code === 'missing_key' ? 'Missing API key' : keyRefused && err.code === 'invalid_key' ? 'Unknown API key' : err.message);
}

export const jobeApi: CompatApi = {
  prefix: '/jobe',
  routes: [jobeLanguagesRoute, jobeRunsRoute, jobePutFileRoute, jobeCheckFileRoute],
  pathsOf: (route) => [route.path, `${route.path}/`],
  renderError,
  loggedPath: (path) => path,
};
