import Router from '@koa/router';
import Koa from 'koa';
import { marketplaceFromConfig } from '../accounts/marketplace.js';
import { COMPAT_APIS } from '../compat/index.js';
import { mountCompat } from '../compat/mount.js';
import { ApiError } from './errors.js';
import { MaintenanceFlag } from './maintenance.js';
import { acceptJsonOrText } from './middleware/accept.js';
import { admission } from './middleware/admission.js';
import { authenticate } from './middleware/authenticate.js';
import { browserAssets } from './middleware/browser-assets.js';
import { errorShape } from './middleware/errors.js';
import { jsonBody } from './middleware/json-body.js';
import { maintenanceGate } from './middleware/maintenance.js';
import { rateLimitHeaders } from './middleware/rate-limit-headers.js';
import type { ApiDeps, ApiState } from './route.js';
import { routes } from './routes/index.js';

// The HTTP API. Every behaviour is a middleware, in this order:
//
//   /piston/, /judge0/: the compatible APIs (src/compat), answered in their own shapes
//   every request:  errorShape → browserAssets (/widget/v1.js) → acceptJsonOrText → unmatched (404, 405)
//                   → router → allowedMethods
//   every route:    maintenanceGate (503) → authenticate (401, 403) → rateLimitHeaders
//                   → jsonBody (400) → admission (limit checks: 400/429) → the route's handler
//
// Each per-route step reads the route's declaration (src/api/routes/*) and does nothing
// for routes that do not ask for it.

export type { ApiDeps } from './route.js';

/** After the router: 405 with Allow when the path exists under another method, else 404. */
function unmatched(): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status === 405) {
      const allow = ctx.response.get('Allow');
      throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: ${allow}`, { Allow: allow });
    }
    if (ctx.status === 404 && (ctx.body === undefined || ctx.body === null)) {
      throw new ApiError(404, 'not_found', `no such resource: ${ctx.method} ${ctx.path}`);
    }
  };
}

export function createApp(deps: ApiDeps): Koa<ApiState> {
  const app = new Koa<ApiState>();
  app.proxy = deps.config.RUNBOX_TRUST_PROXY;
  // Errors are answered by errorShape; this keeps Koa from printing them a second time.
  app.silent = true;
  const maintenance = new MaintenanceFlag(deps.db, deps.maintenanceCacheMs);
  const marketplace = marketplaceFromConfig(deps.config);
  const router = new Router<ApiState>();
  for (const route of routes()) {
    // The trailing slash of the documented paths is optional for callers.
    const paths = route.path.endsWith('/') ? [route.path, route.path.slice(0, -1)] : [route.path];
    router.register(paths, [route.method], [
      maintenanceGate(route, maintenance),
      authenticate(route, deps.db, { keys: deps.keys, marketplace }),
      rateLimitHeaders(route, deps),
      jsonBody(route),
      admission(route, deps),
      route.handler(deps),
    ] as never); // @koa/router types its middleware apart from Koa's; same functions at run time
  }
  app.use(mountCompat(COMPAT_APIS, deps, maintenance));
  app.use(errorShape(deps.log));
  app.use(browserAssets());
  app.use(acceptJsonOrText());
  app.use(unmatched());
  app.use(router.routes() as never);
  app.use(router.allowedMethods() as never);
  return app;
}
