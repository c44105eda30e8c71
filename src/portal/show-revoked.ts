import type Koa from 'koa';
import { readCookie, setCookie } from './cookies.js';

// Whether the keys list and the dashboard show revoked keys. A link sets it
// (?revoked=show or ?revoked=hide, so it works without JavaScript); a cookie remembers
// the choice for both pages until it is changed. Hidden by default.

const COOKIE = 'rbx_show_revoked';
const YEAR_S = 365 * 24 * 3600;

export function showRevoked(ctx: Koa.Context, secure: boolean): boolean {
  const asked = ctx.query['revoked'];
  if (asked === 'show' || asked === 'hide') {
    setCookie(ctx, COOKIE, asked === 'show' ? '1' : '', { secure, maxAge: asked === 'show' ? YEAR_S : 0 });
    return asked === 'show';
  }
  return readCookie(ctx, COOKIE) === '1';
}
