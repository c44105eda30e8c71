import { usageAndRate } from '../../quota/usage.js';
import { RATE_LIMIT_HEADER_DOCS } from '../middleware/rate-limit-headers.js';
import type { RouteDef } from '../route.js';
import { UsageRecordSchema } from '../schemas.js';

// GET /api/usage/: the calling account's usage record.
export const usageRoute: RouteDef = {
  method: 'GET',
  path: '/api/usage/',
  operationId: 'getUsage',
  summary: "The calling account's usage this month and its plan's limits.",
  description:
    'submissions_per_minute, pending_submissions and running_submissions are the LIMITS of the plan; the current counts are in `current`. Calls through the API marketplace have no key and so no `key` object.',
  auth: 'key',
  rateLimitHeaders: true,
  responses: { 200: { description: 'The usage record.', schema: UsageRecordSchema, headers: RATE_LIMIT_HEADER_DOCS } },
  errors: [401, 403, 405, 406, 500],
  handler:
    ({ db, clock }) =>
    async (ctx) => {
      const auth = ctx.state.auth!;
      const found = await usageAndRate(db, { accountId: auth.accountId, keyId: auth.keyId, now: clock.now() });
      if (!found) throw new Error(`account ${auth.accountId} of key ${auth.keyId} is missing`);
      ctx.state.rate = found.rate;
      // A marketplace call has no key, and so no key object.
      ctx.body = found.record;
    },
};
