import type Koa from 'koa';
import { ApiError, DEFAULT_CODES } from '../errors.js';

// Every error answer, whoever raised it, leaves as {"error":{"code","message"}} in JSON.

function send(ctx: Koa.Context, status: number, code: string, message: string, headers: Record<string, string> = {}): void {
  ctx.status = status;
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.type = 'application/json';
  ctx.body = { error: { code, message } };
}

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
      const e = err as { status?: unknown; expose?: unknown; message?: string; headers?: Record<string, string> };
      const status = typeof e.status === 'number' && e.status >= 400 && e.status < 600 ? e.status : 500;
      if (status >= 500) log?.error({ err }, 'request failed');
      const message = status < 500 && e.expose ? (e.message ?? 'error') : status >= 500 ? 'internal server error; try again later' : 'error';
      send(ctx, status, DEFAULT_CODES[status] ?? 'error', message, status < 500 ? (e.headers ?? {}) : {});
    }
  };
}
