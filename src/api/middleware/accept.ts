import type Koa from 'koa';
import { ApiError } from '../errors.js';

// 406 for an Accept header that admits neither JSON nor plain text: every answer of the
// service is one of the two (the submission list's exports also CSV and JSON lines). No
// Accept header admits everything.
const EXPORTS = ['text/csv', 'application/x-ndjson'];
const exportsAt = (path: string) => path === '/api/v2/submissions' || path === '/api/v2/submissions/';

export function acceptJsonOrText(): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.get('Accept') !== '' && !ctx.accepts('application/json', 'text/plain', ...(exportsAt(ctx.path) ? EXPORTS : []))) {
      throw new ApiError(406, 'not_acceptable', 'this service answers in application/json or text/plain; the Accept header admits neither');
    }
    await next();
  };
}
