import type Koa from 'koa';
import { RevokedKeyError } from '../../accounts/errors.js';
import { ApiError, DEFAULT_CODES } from '../errors.js';
import { databaseUnavailable } from '../../db/unavailable.js';

// Every error answer, whoever raised it, leaves as {"error":{"code","message"}} in JSON.

function send(ctx: Koa.Context, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  ctx.status = status;
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = { error: { code, message } };
}

/** The database cannot be reached (down, restarting, refusing connections): a temporary 503, not a 500. */
export { databaseUnavailable };

export function errorShape(log?: { error(obj: object, msg?: string): void }): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // Statuses set without a body (unmatched route, 405 from the router) get the same shape.
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null)) {
        send(ctx, ctx.status, DEFAULT_CODES[ctx.status] ?? 'error', ctx.message || 'error');
      }
    } catch (err) {
      if (err instanceof ApiError) {
        send(ctx, err.status, err.code, err.message, err.headers);
        return;
      }
      // Revoked between authentication and admission: the same answer authentication gives.
      if (err instanceof RevokedKeyError) {
        send(ctx, 401, 'revoked_key', err.message, { 'WWW-Authenticate': 'Bearer realm="runbox"' });
        return;
      }
      if (databaseUnavailable(err)) {
        log?.error({ err: (err as Error).message }, 'database unavailable');
        send(ctx, 503, 'unavailable', 'the service cannot reach its database; try again shortly', { 'Retry-After': '5' });
        return;
      }
      const e = err as { status?: unknown; expose?: unknown; message?: string; headers?: Record<string, string> };
      const status = typeof e.status === 'number' && e.status >= 400 && e.status < 600 ? e.status : 500;
      if (status >= 500) log?.error({ err }, 'request failed');
      const message = status < 500 && e.expose ? (e.message ?? 'error') : status >= 500 ? 'internal server error; try again later' : 'error';
      send(ctx, status, DEFAULT_CODES[status] ?? 'error', message, status < 500 ? (e.headers ?? {}) : {});
    }
  };
}
