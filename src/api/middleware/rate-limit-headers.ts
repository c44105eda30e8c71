import type Koa from 'koa';
import Type from 'typebox';
import { msUntilWindowFrees } from '../../limits.js';
import { usageAndRate, type RateFigures } from '../../quota/usage.js';
import type { ApiDeps, ApiState, ResponseDoc, RouteDef } from '../route.js';

// The conventional rate-limit headers (the names RapidAPI's gateway answers with) on
// every answer of the routes that declare `rateLimitHeaders`, success or error, once
// the caller is known, so clients can pace themselves without polling usage:
//   X-RateLimit-Limit / -Remaining / -Reset   the rolling minute, each test of a
//                                             multi-test request counted as one (Reset:
//                                             seconds until the oldest submission in it
//                                             leaves it)
//   X-RateLimit-Requests-Limit / -Remaining   the monthly allowance that applies to the
//                                             caller: the account's, or its key's own
//                                             limit when that is lower (remaining: the
//                                             smaller of the two)
// A run's answer takes them from its admission (read under the account's lock);
// other answers read the same counters.

export function rateLimitHeaderValues(f: RateFigures, now: Date): Record<string, string> {
  const oldest = f.oldestInWindow?.getTime();
  const reset = f.lastMinute === 0 || oldest === undefined ? 0 : Math.ceil(msUntilWindowFrees(oldest, now.getTime()) / 1000);
  const accountLeft = Math.max(0, f.monthlyLimit - f.used);
  const keyLeft = f.keyLimit === null ? null : Math.max(0, f.keyLimit - f.keyUsed);
  return {
    'X-RateLimit-Limit': String(f.perMinute),
    'X-RateLimit-Remaining': String(Math.max(0, f.perMinute - f.lastMinute)),
    'X-RateLimit-Reset': String(reset),
    'X-RateLimit-Requests-Limit': String(f.keyLimit !== null && f.keyLimit < f.monthlyLimit ? f.keyLimit : f.monthlyLimit),
    'X-RateLimit-Requests-Remaining': String(keyLeft === null ? accountLeft : Math.min(accountLeft, keyLeft)),
  };
}

export function rateLimitHeaders(route: RouteDef, deps: ApiDeps): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    if (!route.rateLimitHeaders) return next();
    try {
      await next();
    } finally {
      const auth = ctx.state.auth;
      if (auth && !ctx.headerSent) {
        const now = deps.clock.now();
        // An answer without an admission (a refused body, the usage record) reads the counters.
        const figures = ctx.state.rate ?? (await usageAndRate(deps.db, { accountId: auth.accountId, keyId: auth.keyId, now }).catch(() => undefined))?.rate;
        if (figures) for (const [name, value] of Object.entries(rateLimitHeaderValues(figures, now))) ctx.set(name, value);
      }
    }
  };
}

/** The headers as documented in the OpenAPI answers of the routes that carry them. */
export const RATE_LIMIT_HEADER_DOCS: NonNullable<ResponseDoc['headers']> = {
  'X-RateLimit-Limit': { description: 'Submissions allowed per rolling minute (the account\'s plan); each test of a multi-test request counts as one.', schema: Type.Integer() },
  'X-RateLimit-Remaining': { description: 'Submissions (tests) left in the rolling minute.', schema: Type.Integer() },
  'X-RateLimit-Reset': { description: 'Seconds until the oldest submission of the rolling minute leaves it (0: none in it).', schema: Type.Integer() },
  'X-RateLimit-Requests-Limit': { description: "The monthly allowance that applies: the account's, or the key's own limit when lower.", schema: Type.Integer() },
  'X-RateLimit-Requests-Remaining': { description: 'Submissions left this month (the smaller of the account\'s and the key\'s).', schema: Type.Integer() },
};
