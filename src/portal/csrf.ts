import { randomBytes, timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';
import { readCookie, setCookie } from './cookies.js';
import { field, PortalError, type PortalContext, type PortalState } from './state.js';

// Every state-changing request carries a CSRF token in the form field _csrf. Signed in,
// the token belongs to the session (stored with it); before log-in it is a random
// value also held in an HttpOnly cookie (double submit), which another site can
// neither read nor set. A request whose Origin header names another site is refused
// whatever it carries.

const PRE_SESSION_COOKIE = 'rbx_csrf';

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export function csrf(opts: { secure: boolean; ownOrigins: (ctx: Koa.Context) => string[] }): Koa.Middleware<PortalState> {
  return async (ctx, next) => {
    const c = ctx as unknown as PortalContext;
    if (c.state.session) {
      c.state.csrf = c.state.session.csrfToken;
    } else {
      let token = readCookie(ctx, PRE_SESSION_COOKIE);
      if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) {
        token = randomBytes(32).toString('base64url');
        setCookie(ctx, PRE_SESSION_COOKIE, token, { secure: opts.secure });
      }
      c.state.csrf = token;
    }
    if (!['GET', 'HEAD', 'OPTIONS'].includes(ctx.method)) {
      const origin = ctx.get('Origin');
      if (origin && origin !== 'null' && !opts.ownOrigins(ctx).includes(origin)) {
        throw new PortalError(403, 'This form was sent from another site and was refused.');
      }
      if (!same(field(c, '_csrf'), c.state.csrf)) {
        throw new PortalError(403, 'This form has expired or did not come from this site. Reload the page and try again.');
      }
    }
    await next();
  };
}
