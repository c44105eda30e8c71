import Type from 'typebox';
import type { RouteDef } from '../route.js';
import { RunCodeRequest } from '../schemas.js';

// POST /api/v2/run-code/: the job is admitted and stored by the middleware stack;
// the answer is the plain acknowledgement, with where to find the submission.
export const runCodeRoute: RouteDef = {
  method: 'POST',
  path: '/api/v2/run-code/',
  operationId: 'runCode',
  summary: 'Submit code to run; the result goes to the key\'s callback URL.',
  auth: 'key',
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
      },
    },
  },
  errors: [400, 401, 405, 406, 429, 500, 503],
  handler: () => async (ctx) => {
    const id = ctx.state.submission!.id;
    ctx.set('X-Submission-Id', id);
    ctx.set('Location', `/api/v2/submissions/${id}`);
    ctx.type = 'text/plain';
    ctx.body = 'Ok';
  },
};
