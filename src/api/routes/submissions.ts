import Type from 'typebox';
import { ApiError } from '../errors.js';
import type { RouteDef } from '../route.js';
import { lookupSubmission } from '../submission-view.js';
import { keyAsker } from '../../problems/feedback.js';
import { RunResultSchema } from '../../result.js';
import { expiredMessage } from '../../retention/expired.js';

// GET /api/v2/submissions/:id: a submission of the caller's account, its state and
// times, its result once it has ended and its latest callback delivery. One the
// retention purge deleted answers 410 submission_expired. Anything else (another
// account's, a malformed id) is 404, so ids cannot be probed.

const NullableDate = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const SubmissionView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: Type.Enum(['queued', 'running', 'finished', 'failed']),
  created_at: Type.String({ format: 'date-time' }),
  started_at: NullableDate,
  finished_at: NullableDate,
  result: Type.Optional(RunResultSchema),
  callback: Type.Union([
    Type.Object({
      state: Type.Enum(['pending', 'delivered', 'dead']),
      attempts: Type.Integer(),
      last_status: Type.Union([Type.Integer(), Type.Null()]),
      last_error: Type.Union([Type.String(), Type.Null()]),
      next_attempt_at: NullableDate,
    }),
    Type.Null(),
  ]),
});


export const submissionsRoute: RouteDef = {
  method: 'GET',
  path: '/api/v2/submissions/:id',
  operationId: 'getSubmission',
  summary: 'A submission of the calling account: state, result, callback delivery.',
  auth: 'key',
  responses: { 200: { description: 'The submission.', schema: SubmissionView } },
  errors: [401, 403, 404, 405, 406, 410, 500],
  handler:
    ({ db, config }) =>
    async (ctx) => {
      const auth = ctx.state.auth!;
      const id = String(ctx.params['id'] ?? '');
      const found = await lookupSubmission(db, keyAsker(auth), id);
      if (found === undefined) throw new ApiError(404, 'not_found', `no submission ${id}`);
      if ('expired' in found) throw new ApiError(410, 'submission_expired', expiredMessage(found.expired, config.RUNBOX_RETENTION_DAYS));
      ctx.type = 'application/json';
      ctx.body = found.json;
    },
};
