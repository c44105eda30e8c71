import type Koa from 'koa';
import { admitProblemWrite, problemWritesRefusal } from '../../problems/write-limit.js';
import { ApiError } from '../errors.js';
import type { ApiDeps, ApiState, RouteDef } from '../route.js';

// 429 rate_limited, with Retry-After, on the routes that write an account's problems once
// it has made PROBLEM_LIMITS.writesPerMinute of them in the rolling minute; counted before
// the body is read, so a refused write costs no upload.

export function problemWrites(route: RouteDef, deps: ApiDeps): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    const auth = ctx.state.auth;
    if (!route.problemWrite || !auth) return next();
    const refused = await admitProblemWrite(deps.db, auth.accountId);
    if (refused) throw new ApiError(429, 'rate_limited', problemWritesRefusal(refused.retryAfterSeconds), { 'Retry-After': String(refused.retryAfterSeconds) });
    await next();
  };
}
