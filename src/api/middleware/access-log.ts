import type Koa from 'koa';
import type { ApiLog, ApiState } from '../route.js';

// One line per API answer, at info: method, route (the route's pattern, so no id or
// key from a path), status, milliseconds and the caller's account when known. Never a
// key, a header or a query string. Outermost, so the status is the one sent.

export function accessLog(log: ApiLog | undefined, applies: (path: string) => boolean): Koa.Middleware<ApiState> {
  return async (ctx, next) => {
    if (!log?.info || !applies(ctx.path)) return next();
    const started = performance.now();
    let status: number | undefined;
    try {
      await next();
      // A handler that answered on the raw response (the MCP transport) set its status there.
      status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
    } catch (err) {
      status = (err as { status?: number }).status ?? 500;
      throw err;
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const line: Record<string, unknown> = {
        method: ctx.method,
        // Unmatched /api/ paths carry no key (keys travel in headers); other unmatched paths are not named.
        route: typeof matched === 'string' ? matched : ctx.path.startsWith('/api/') ? ctx.path : null,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      };
      if (ctx.state.auth) line['account'] = ctx.state.auth.accountId;
      if (ctx.state.admin) line['admin_key'] = ctx.state.admin.id;
      log.info(line, 'api request');
    }
  };
}
