import Router from '@koa/router';
import type Koa from 'koa';
import bodyParser from 'koa-bodyparser';
import compose from 'koa-compose';
import { databaseUnavailable } from '../api/middleware/errors.js';
import { publicUrl } from '../config.js';
import { PROBLEM_LIMITS, REQUEST_LIMITS } from '../limits.js';
import { serveAssets } from './assets.js';
import { readCookie } from './cookies.js';
import { csrf } from './csrf.js';
import { securityHeaders } from './headers.js';
import { sendPage } from './render.js';
import { accountRoutes } from './routes/account.js';
import { authRoutes, secureCookies } from './routes/auth.js';
import { dashboardRoutes } from './routes/dashboard.js';
import { docsRoutes } from './routes/docs.js';
import { keyRoutes } from './routes/keys.js';
import { playgroundRoutes } from './routes/playground.js';
import { problemEditRoutes } from './routes/problem-edits.js';
import { problemRoutes } from './routes/problems.js';
import { submissionRoutes } from './routes/submissions.js';
import { findSession, SESSION_COOKIE } from './sessions.js';
import { multipartBody } from './upload.js';
import { notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from './state.js';
import { ErrorPage } from './views/error.js';

// The web portal, served by the API's Koa app for every path outside /api/. In order:
//
//   securityHeaders → errorPage → assets → form body → session → file upload → CSRF → routes → 404 page
//
// Pages that need an account send visitors without a session to /login.

const PUBLIC_PATHS = new Set(['/login', '/signup', '/logout', '/forgot', '/reset', '/verify']);
const isPublic = (path: string) => PUBLIC_PATHS.has(path) || path === '/docs' || path.startsWith('/docs/');

function errorPage(deps: PortalDeps): Koa.Middleware<PortalState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && (ctx.body === undefined || ctx.body === null)) throw notFound();
      if (ctx.status === 405 && (ctx.body === undefined || ctx.body === null)) throw new PortalError(405, `${ctx.method} is not allowed here.`);
    } catch (err) {
      const c = ctx as unknown as PortalContext;
      c.state.csrf ??= '';
      let status = 500;
      let message = 'Something went wrong on our side. Try again in a moment.';
      if (err instanceof PortalError) ({ status, message } = err);
      else if (databaseUnavailable(err)) [status, message] = [503, 'The service cannot reach its database right now. Try again shortly.'];
      else if (typeof (err as { status?: unknown }).status === 'number' && (err as { status: number }).status < 500) {
        status = (err as { status: number }).status;
        message = status === 413 ? 'The form is too large.' : 'The request could not be read.';
      } else deps.log?.error({ err }, 'portal request failed');
      sendPage(ctx, <ErrorPage page={pageContext(c)} status={status} message={message} />, status);
    }
  };
}

function loadSession(deps: PortalDeps, isPage: (path: string) => boolean): Koa.Middleware<PortalState> {
  return async (ctx, next) => {
    const id = readCookie(ctx, SESSION_COOKIE);
    if (id) ctx.state.session = await findSession(deps.db, id);
    // A path that is no page is a 404 for everyone (not a detour through log-in).
    if (!ctx.state.session && !isPublic(ctx.path) && isPage(ctx.path)) {
      if (ctx.method === 'GET' || ctx.method === 'HEAD') return ctx.redirect(`/login${ctx.path === '/' ? '' : `?next=${encodeURIComponent(ctx.originalUrl)}`}`);
      throw new PortalError(401, 'Your session has ended. Log in again.');
    }
    await next();
  };
}

/** Form bodies: 256 KB, but the playground's form carries a program's files and tests (as the API's 4 MiB body, URL-encoded), and so do the problem forms (tests, a statement). */
function formBody(): Koa.Middleware<PortalState> {
  const small = bodyParser({ enableTypes: ['form'], formLimit: '256kb' });
  const playground = bodyParser({ enableTypes: ['form'], formLimit: `${3 * REQUEST_LIMITS.bodyMaxBytes}b` });
  return (ctx, next) => (ctx.path === '/playground' || ctx.path === '/problems/new' || /^\/problems\/[^/]+\/edit$/.test(ctx.path) ? playground : small)(ctx as never, next);
}

export function createPortal(deps: PortalDeps): Koa.Middleware {
  const router = new Router<PortalState>();
  authRoutes(router, deps);
  accountRoutes(router, deps);
  dashboardRoutes(router, deps);
  keyRoutes(router, deps);
  submissionRoutes(router, deps);
  playgroundRoutes(router, deps);
  // Before problemRoutes: /problems/new is no problem's id.
  problemEditRoutes(router, deps);
  problemRoutes(router, deps);
  docsRoutes(router);
  const stack: Koa.Middleware<PortalState>[] = [
    securityHeaders(),
    errorPage(deps),
    serveAssets(),
    formBody(),
    loadSession(deps, (path) => router.match(path, 'GET').path.length > 0),
    multipartBody((path) => path === '/problems' || /^\/problems\/[^/]+\/version$/.test(path), PROBLEM_LIMITS.uploadMaxBytes, `The package is larger than ${PROBLEM_LIMITS.uploadMaxBytes / 1024 / 1024} MiB.`),
    // A test typed or uploaded on a problem's page: its input and expected output.
    multipartBody((path) => /^\/problems\/[^/]+\/tests$/.test(path), PROBLEM_LIMITS.testFileMaxBytes, `A test file is larger than ${PROBLEM_LIMITS.testFileMaxBytes / 1024 / 1024} MiB.`, { files: 2, fieldMaxBytes: REQUEST_LIMITS.inputMaxBytes }),
    csrf({ secure: secureCookies(deps), ownOrigins: (ctx) => [`${ctx.protocol}://${ctx.host}`, publicUrl(deps.config)] }),
    router.routes() as never,
    router.allowedMethods() as never,
  ];
  return compose(stack) as Koa.Middleware;
}

