import type Koa from 'koa';
import { ApiError } from '../errors.js';

// 406 for an Accept header that admits neither JSON nor plain text: every answer of the
// service is one of the two. No Accept header admits everything.
export function acceptJsonOrText(): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.get('Accept') !== '' && !ctx.accepts('application/json', 'text/plain')) {
      throw new ApiError(406, 'not_acceptable', 'this service answers in application/json or text/plain; the Accept header admits neither');
    }
    await next();
  };
}
