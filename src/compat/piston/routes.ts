import type Koa from 'koa';
import { keyAsker } from '../../problems/feedback.js';
import { deploymentAvailability } from '../../compilers/deployment.js';
import { compilerEntry } from '../../compilers/catalogue.js';
import { ApiError } from '../../api/errors.js';
import { runAdmitter } from '../../api/middleware/admission.js';
import { apiKeyContext, keyFromHeader } from '../../api/middleware/authenticate.js';
import { readJsonBody } from '../../api/middleware/json-body.js';
import { storedResult, waitForRunEnd } from '../../api/live.js';
import type { ApiDeps, RouteDef } from '../../api/route.js';
import type { CompatApi } from '../mount.js';
import { PistonExecuteRequest, pistonJob, pistonStdin } from './request.js';
import { PistonError, PistonExecuteResponse, PistonRuntimeList, pistonResponse } from './response.js';
import { pistonRuntimes } from './runtimes.js';
import { PistonConnectClientMessage, PistonConnectServerMessage } from './connect-messages.js';
import { KEY_CARRIERS } from '../../accounts/errors.js';

// Piston v2 (engineer-man/piston api/src/api/v2.js) at /piston/api/v2/: the runtimes
// and execute. An execute is a synchronous runbox run of mode 'piston': admitted,
// counted and limited like POST /api/v2/run-code-sync/, answered in Piston's shape.
// The key comes in Authorization, or, for clients that cannot set a header (the npm
// piston-client sends none), as the path segment after /piston/.

const TAGS = ['Piston v2 compatible'];
const KEY_IN_PATH = /^\/piston\/(?!api(?:\/|$))[^/]+/;

const availableRuntimes = (deps: ApiDeps) => async () =>
  pistonRuntimes(await deploymentAvailability(deps.db, deps.config));

export const pistonRuntimesRoute: RouteDef = {
  method: 'GET',
  path: '/piston/api/v2/runtimes',
  operationId: 'pistonRuntimes',
  tags: TAGS,
  summary: "Piston's runtimes: one per installed compiler, under Piston's language names and aliases.",
  auth: 'none',
  responses: { 200: { description: 'The runtimes.', schema: PistonRuntimeList } },
  errors: [404, 405, 500],
  errorBody: PistonError,
  handler: (deps) => {
    const runtimes = availableRuntimes(deps);
    return async (ctx) => {
      ctx.body = (await runtimes()).map(({ language, version, aliases, runtime }) => ({ language, version, aliases, ...(runtime ? { runtime } : {}) }));
    };
  },
};

export const pistonExecuteRoute: RouteDef = {
  method: 'POST',
  path: '/piston/api/v2/execute',
  operationId: 'pistonExecute',
  tags: TAGS,
  summary: 'Run code the way Piston does and answer with its result.',
  description: [
    'Piston v2 execute. The key goes in Authorization, or as the path segment after /piston/ (/piston/{key}/api/v2/execute) for',
    'clients that cannot set a header; a key in the path appears in access logs. A text/plain body (or none) that parses as JSON',
    "is accepted. Counted and limited like a synchronous run; limits above runbox's are clamped. 429 answers carry Retry-After.",
  ].join(' '),
  auth: 'key',
  maintenance: true,
  body: PistonExecuteRequest,
  responses: { 200: { description: "The result in Piston's shape.", schema: PistonExecuteResponse } },
  errors: [400, 401, 403, 404, 405, 415, 429, 500, 503],
  errorBody: PistonError,
  handler: (deps) => {
    const runtimes = availableRuntimes(deps);
    const admit = runAdmitter(deps);
    return async (ctx) => {
      const live = deps.live;
      if (!live) throw new ApiError(500, 'internal_error', 'synchronous runs are not available on this API process');
      const key = typeof ctx.params['key'] === 'string' ? ctx.params['key'] : keyFromHeader(ctx.get('Authorization'));
      const auth = await apiKeyContext(deps.db, key, deps.keys, KEY_CARRIERS.piston);
      const job = pistonJob(await readJsonBody(ctx, { acceptText: true }), await runtimes());
      const { id, admittedAt } = await admit(auth, { ...job.run, input: pistonStdin(job.run.input) }, 'piston');
      if (!(await waitForRunEnd(ctx.res, live, id, deps.db, deps.log, admittedAt))) {
        ctx.respond = false;
        return;
      }
      ctx.set('X-Submission-Id', id);
      ctx.body = pistonResponse(await storedResult(deps.db, id, keyAsker(auth), live), job.runtime, compilerEntry(job.runtime.compiler, deps.config.RUNBOX_RECIPES_DIR)?.compile !== undefined);
    };
  },
};

export const pistonConnectRoute: RouteDef = {
  method: 'GET',
  path: '/piston/api/v2/connect',
  operationId: 'pistonConnect',
  tags: TAGS,
  summary: "Piston's interactive WebSocket: run code, receive its output as it is written, send its stdin while it runs.",
  description: [
    'Upgrade to a WebSocket; the key goes in Authorization or as the path segment after /piston/ (/piston/{key}/api/v2/connect).',
    'Send {"type":"init", ...the execute request} within a second, then {"type":"data","stream":"stdin","data"} as often as needed',
    'and {"type":"signal","signal":"SIGKILL"} to stop the program. Answers: {"type":"runtime","language","version"},',
    '{"type":"stage","stage"}, {"type":"data","stream","data"}, {"type":"exit","stage","code","signal"}, then close 4999.',
    "Piston's close codes: 4000 second init, 4001 no init in time, 4002 after an error message, 4003 not yet initialized,",
    '4004 a stream other than stdin, 4005 an invalid signal. One interactive WebSocket run of runbox: counted and limited like one,',
    "stopped when the connection closes; stdin is a pipe. Unlike Piston, the init's stdin is written first, any signal stops the",
    "program, and the compiler's messages come when it ends. A plain GET answers 426.",
  ].join(' '),
  auth: 'key',
  responses: { 101: { description: 'Switching to the WebSocket protocol.' } },
  webSocket: { client: PistonConnectClientMessage, server: PistonConnectServerMessage },
  errors: [401, 403, 404, 405, 426, 429, 500],
  errorBody: PistonError,
  handler: () => async () => {
    throw new ApiError(426, 'upgrade_required', 'this is a WebSocket endpoint; connect with a WebSocket client', { Upgrade: 'websocket' });
  },
};

function renderError(ctx: Koa.Context, err: ApiError): void {
  // Piston answers a body of another type with 415 (its v2 router's first check).
  ctx.status = err.code === 'unsupported_content_type' ? 415 : err.status;
  for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = { message: err.message };
}

export const pistonApi: CompatApi = {
  prefix: '/piston',
  routes: [pistonRuntimesRoute, pistonExecuteRoute, pistonConnectRoute],
  // Each route also at /piston/<key>/api/v2/...
  pathsOf: (route) => [route.path, route.path.replace(/^\/piston\//, '/piston/:key/')].flatMap((p) => [p, `${p}/`]),
  renderError,
  loggedPath: (path) => path.replace(KEY_IN_PATH, '/piston/<key>'),
};
