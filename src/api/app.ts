import Router from '@koa/router';
import Koa from 'koa';
import { marketplaceFromConfig } from '../accounts/marketplace.js';
import { COMPAT_APIS } from '../compat/index.js';
import { mountCompat } from '../compat/mount.js';
import compose from 'koa-compose';
import { ApiError } from './errors.js';
import { MaintenanceFlag } from './maintenance.js';
import { acceptJsonOrText } from './middleware/accept.js';
import { accessLog } from './middleware/access-log.js';
import { admission } from './middleware/admission.js';
import { authenticate } from './middleware/authenticate.js';
import { browserAssets, isBrowserAsset } from './middleware/browser-assets.js';
import { errorShape } from './middleware/errors.js';
import { jsonBody } from './middleware/json-body.js';
import { maintenanceGate } from './middleware/maintenance.js';
import { problemWrites } from './middleware/problem-writes.js';
import { rateLimitHeaders } from './middleware/rate-limit-headers.js';
import type { ApiDeps, ApiState } from './route.js';
import { routes } from './routes/index.js';
import { createPortal } from '../portal/app.js';
import { isMcpPath, mcpHttp } from '../mcp/http.js';

// The HTTP API. Every behaviour is a middleware, in this order:
//
//   /piston/, /judge0/: the compatible APIs (src/compat), answered in their own shapes
//   /mcp:           errorShape → the MCP face (src/mcp: key, body, then its transport)
//   /widget/v1.js and /widget/editor/*: errorShape → browserAssets (served to any origin)
//   API paths:      errorShape → acceptJsonOrText → unmatched (404, 405) → router → allowedMethods
//   every route:    maintenanceGate (503) → authenticate (401, 403) → rateLimitHeaders
//                   → problemWrites (429) → jsonBody (400) → admission (limit checks:
//                   400/429) → the route's handler
//
// Paths outside /api/ (and /metrics) belong to the web portal (src/portal), which
// answers HTML; the API's JSON error shape and Accept rules apply only to the API.
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

export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/') || path === '/metrics';
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
      problemWrites(route, deps),
      jsonBody(route),
      admission(route, deps),
      route.handler(deps),
    ] as never); // @koa/router types its middleware apart from Koa's; same functions at run time
  }
  // One log line per answer of the API, the MCP face and the compatible APIs (not the portal's pages).
  app.use(accessLog(deps.log, (path) => isApiPath(path) || isMcpPath(path) || COMPAT_APIS.some((c) => path === c.prefix || path.startsWith(`${c.prefix}/`))));
  // The compatible APIs answer in their own shapes, ahead of runbox's own middleware.
  app.use(mountCompat(COMPAT_APIS, deps, maintenance));
  const api = compose([errorShape(deps.log), acceptJsonOrText(), unmatched(), router.routes() as never, router.allowedMethods() as never]);
  // The widget's bundle (/widget/v1.js) is loaded by other sites' pages: it is served
  // apart from both, with the API's JSON errors.
  const widgetAssets = compose([errorShape(deps.log), browserAssets()]);
  // The MCP face (src/mcp): its tools call the same admission, waits and stores as the routes.
  const mcp = compose([errorShape(deps.log), mcpHttp(deps, maintenance)]);
  const portal = createPortal(deps);
  app.use((ctx, next) =>
    isApiPath(ctx.path) ? api(ctx, next) : isMcpPath(ctx.path) ? mcp(ctx, next) : isBrowserAsset(ctx.path) ? widgetAssets(ctx, next) : portal(ctx, next),
  );
  return app;
}
