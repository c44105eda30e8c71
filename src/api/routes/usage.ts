import { usageRecord } from '../../quota/usage.js';
import type { RouteDef } from '../route.js';
import { UsageRecordSchema } from '../schemas.js';

// GET /api/usage/: the calling account's usage record (spec 2.3).
export const usageRoute: RouteDef = {
  method: 'GET',
  path: '/api/usage/',
  operationId: 'getUsage',
  summary: "The calling account's usage this month and its plan's limits.",
  description:
    'submissions_per_minute, pending_submissions and running_submissions are the LIMITS of the plan; the current counts are in `current`.',
  auth: 'key',
  responses: { 200: { description: 'The usage record.', schema: UsageRecordSchema } },
  errors: [401, 403, 405, 406, 500],
  handler:
    ({ db, clock }) =>
    async (ctx) => {
      const auth = ctx.state.auth!;
      const record = await usageRecord(db, { accountId: auth.accountId, keyId: auth.keyId, now: clock.now() });
      if (!record) throw new Error(`account ${auth.accountId} of key ${auth.keyId} is missing`);
      ctx.body = record;
    },
};
