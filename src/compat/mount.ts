import Router from '@koa/router';
import type Koa from 'koa';
import { ApiError } from '../api/errors.js';
import type { MaintenanceFlag } from '../api/maintenance.js';
import { databaseUnavailable } from '../api/middleware/errors.js';
import { maintenanceGate } from '../api/middleware/maintenance.js';
import type { ApiDeps, ApiState, RouteDef } from '../api/route.js';

// The compatible APIs (Piston, Judge0), each under its own prefix, answered entirely
// here: runbox's generic middleware (Accept negotiation, the {"error":{code,message}}
// shape, Authorization-only keys) would turn their answers into runbox's. Every run
// still goes through runbox's admission, queue and results: the routes translate, the
// limits are the same. Errors are raised as ApiError, like everywhere in the API, and
// each compatible API renders them in its own shape. The routes are declared as
// RouteDefs for the OpenAPI document; only maintenanceGate is taken from runbox's
// per-route stack, since each handler finds its key, reads its body and admits its
// run in its API's own way (through runbox's authentication and admission functions).

export interface CompatApi {
  /** '/piston', '/judge0' or '/jobe'. */
  prefix: string;
  routes: RouteDef[];
  /** The paths a route answers at (Piston also takes the key as a path segment). */
  pathsOf(route: RouteDef): string[];
  /** Renders an error in this API's shape. */
  renderError(ctx: Koa.Context, err: ApiError): void;
  /** The request path as it may be logged (a key in the path is redacted). */
  loggedPath(path: string): string;
}

export function mountCompat(apis: CompatApi[], deps: ApiDeps, maintenance: MaintenanceFlag): Koa.Middleware<ApiState> {
  const mounted = apis.map((api) => {
    const router = new Router<ApiState>();
    for (const route of api.routes) {
      router.register(api.pathsOf(route), [route.method], [maintenanceGate(route, maintenance), route.handler(deps)] as never);
    }
    return { api, dispatch: router.routes() as unknown as Koa.Middleware<ApiState>, methods: router.allowedMethods() as unknown as Koa.Middleware<ApiState> };
  });
  return async (ctx, next) => {
    const found = mounted.find((m) => ctx.path === m.api.prefix || ctx.path.startsWith(`${m.api.prefix}/`));
    if (!found) return next();
    const { api } = found;
    try {
      await found.dispatch(ctx, () => found.methods(ctx, async () => {}));
      if (ctx.status === 405) {
        const allow = ctx.response.get('Allow');
        throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
      }
      if (ctx.status === 404 && (ctx.body === undefined || ctx.body === null)) {
        throw new ApiError(404, 'not_found', `no such resource: ${ctx.method} ${api.loggedPath(ctx.path)}`);
      }
    } catch (err) {
      api.renderError(ctx, asApiError(err, deps, api.loggedPath(ctx.path)));
    }
  };
}

function asApiError(err: unknown, deps: ApiDeps, path: string): ApiError {
  if (err instanceof ApiError) return err;
  if (databaseUnavailable(err)) {
    deps.log?.error({ err: (err as Error).message, path }, 'database unavailable');
    return new ApiError(503, 'unavailable', 'the service cannot reach its database; try again shortly', { 'Retry-After': '5' });
  }
  const e = err as { status?: unknown; expose?: unknown; message?: string };
  const status = typeof e.status === 'number' && e.status >= 400 && e.status < 600 ? e.status : 500;
  if (status >= 500) {
    deps.log?.error({ err, path }, 'request failed');
    return new ApiError(500, 'internal_error', 'internal server error; try again later');
  }
  return new ApiError(status, 'error', e.expose && e.message ? e.message : 'error');
}
