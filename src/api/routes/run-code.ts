import Type from 'typebox';
import { RATE_LIMIT_HEADER_DOCS } from '../middleware/rate-limit-headers.js';
import type { RouteDef } from '../route.js';
import { RunCodeRequest } from '../schemas.js';

// POST /api/v2/run-code/: the job is admitted and stored by the middleware stack;
// the answer is the plain acknowledgement, with where to find the submission.
export const runCodeRoute: RouteDef = {
  method: 'POST',
  path: '/api/v2/run-code/',
  operationId: 'runCode',
  summary: 'Submit code to run; the result goes to the key\'s callback URL.',
  description: [
    'Answers 200 with the text Ok once the job is stored; nothing is counted for a refused request.',
    '400 codes: invalid_request, invalid_json, invalid_utf8, too_deeply_nested, invalid_unicode, body_too_large, unsupported_content_type,',
    "too_many_tests (over the plan's tests per request, or more tests than the per-minute limit),",
    "too_much_sandbox_time (the compile stage's timeout plus tests × the run timeout is over the plan's sandbox seconds per request),",
    "unknown_field (a field runbox does not take, named; another service's name for one of runbox's says which), compiler_unavailable (the compiler's image is not installed here:",
    'a 400 rather than a 503, since retrying the same request will not help until an operator installs it).',
    '429 codes: rate_limited, too_many_pending, monthly_limit, key_monthly_limit, each with Retry-After in seconds.',
  ].join(' '),
  auth: 'key',
  rateLimitHeaders: true,
  maintenance: true,
  body: RunCodeRequest,
  admits: 'async',
  responses: {
    200: {
      description: 'Accepted: the text Ok.',
      contentType: 'text/plain',
      headers: {
        'X-Submission-Id': { description: 'Id of the stored submission.', schema: Type.String({ format: 'uuid' }) },
        Location: { description: 'Where the submission can be looked up.', schema: Type.String() },
        ...RATE_LIMIT_HEADER_DOCS,
      },
    },
  },
  errors: [400, 401, 403, 405, 406, 429, 500, 503],
  handler: () => async (ctx) => {
    const id = ctx.state.submission!.id;
    ctx.set('X-Submission-Id', id);
    ctx.set('Location', `/api/v2/submissions/${id}`);
    ctx.type = 'text/plain';
    ctx.body = 'Ok';
  },
};
