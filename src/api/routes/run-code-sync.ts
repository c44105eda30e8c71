import { ApiError } from '../errors.js';
import { storedResultJson, waitForRunEnd } from '../live.js';
import { RATE_LIMIT_HEADER_DOCS } from '../middleware/rate-limit-headers.js';
import type { RouteDef } from '../route.js';
import { RunCodeRequest } from '../schemas.js';
import { RunResultSchema } from '../../result.js';
import { keyAsker } from '../../problems/feedback.js';

// POST /api/v2/run-code-sync/: admitted like any run (mode 'sync': refused at once when
// no slot is free, claimed ahead of queued asynchronous jobs), then the request waits
// for the run to end and answers with the result. A client that goes away stops the
// run (src/queue/cancel.ts): its runner kills the sandbox at once and the account's
// slot frees; the run stays counted.
export const runCodeSyncRoute: RouteDef = {
  method: 'POST',
  path: '/api/v2/run-code-sync/',
  operationId: 'runCodeSync',
  summary: 'Run code and answer with the result.',
  description: [
    'Same body as run-code. Answers 200 with the result once the run has ended; counted like any run.',
    "429 codes: as run-code, plus too_many_running (all of the account's run slots are busy: a synchronous run does not wait)",
    'and capacity (every runner slot of the service is busy).',
  ].join(' '),
  auth: 'key',
  rateLimitHeaders: true,
  maintenance: true,
  body: RunCodeRequest,
  admits: 'sync',
  responses: { 200: { description: 'The result.', schema: RunResultSchema, headers: RATE_LIMIT_HEADER_DOCS } },
  errors: [400, 401, 403, 405, 406, 429, 500, 503],
  handler: (deps) => async (ctx) => {
    const live = deps.live;
    if (!live) throw new ApiError(500, 'internal_error', 'synchronous runs are not available on this API process');
    const { id, admittedAt } = ctx.state.submission!;
    if (!(await waitForRunEnd(ctx.res, live, id, deps.db, deps.log, admittedAt))) {
      // Nobody to answer: the run was cancelled (it stays counted).
      ctx.respond = false;
      return;
    }
    ctx.set('X-Submission-Id', id);
    ctx.type = 'application/json';
    ctx.body = await storedResultJson(deps.db, id, keyAsker(ctx.state.auth!), {}, live);
  },
};
