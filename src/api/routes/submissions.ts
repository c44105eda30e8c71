import Type from 'typebox';
import { ApiError } from '../errors.js';
import { storedResultJson } from '../live.js';
import type { RouteDef } from '../route.js';
import { RunResultSchema } from '../../result.js';
import { orderedJson, RawJson } from '../../util/raw-json.js';

// GET /api/v2/submissions/:id: a submission of the caller's account, its state and
// times, its result once it has ended and its latest callback delivery. Anything
// else (another account's, a malformed id) is 404, so ids cannot be probed.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
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

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

export const submissionsRoute: RouteDef = {
  method: 'GET',
  path: '/api/v2/submissions/:id',
  operationId: 'getSubmission',
  summary: 'A submission of the calling account: state, result, callback delivery.',
  auth: 'key',
  responses: { 200: { description: 'The submission.', schema: SubmissionView } },
  errors: [401, 403, 404, 405, 406, 500],
  handler:
    ({ db }) =>
    async (ctx) => {
      const auth = ctx.state.auth!;
      const id = String(ctx.params['id'] ?? '');
      const notFound = new ApiError(404, 'not_found', `no submission ${id}`);
      if (!UUID.test(id)) throw notFound;
      const row = await db
        .selectFrom('submissions')
        .select(['id', 'state', 'created_at', 'started_at', 'finished_at', 'account_id'])
        .where('id', '=', id)
        .where('account_id', '=', auth.accountId)
        .executeTakeFirst();
      if (!row) throw notFound;
      const delivery = await db
        .selectFrom('callback_deliveries')
        .select(['state', 'attempts', 'last_status', 'last_error', 'run_at'])
        .where('submission_id', '=', id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .executeTakeFirst();
      const ended = row.state === 'finished' || row.state === 'failed';
      // The result in its documented field order, extra_params as sent (src/result.ts).
      ctx.type = 'application/json';
      ctx.body = orderedJson([
        ['id', row.id],
        ['state', row.state],
        ['created_at', iso(row.created_at)],
        ['started_at', iso(row.started_at)],
        ['finished_at', iso(row.finished_at)],
        ['result', ended ? new RawJson(await storedResultJson(db, id)) : undefined],
        [
          'callback',
          delivery
            ? {
                state: delivery.state,
                attempts: delivery.attempts,
                last_status: delivery.last_status,
                last_error: delivery.last_error,
                next_attempt_at: delivery.state === 'pending' ? iso(delivery.run_at) : null,
              }
            : null,
        ],
      ]);
    },
};
