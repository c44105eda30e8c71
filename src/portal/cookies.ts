import type Koa from 'koa';

// Cookies of the portal, written by hand so the Secure flag follows RUNBOX_PUBLIC_URL
// (https behind a TLS-terminating proxy) rather than the scheme of the hop that
// reached this process.

export interface CookieOptions {
  secure: boolean;
  /** Seconds; absent: a browser-session cookie. 0 deletes. */
  maxAge?: number;
}

export function setCookie(ctx: Koa.Context, name: string, value: string, opts: CookieOptions): void {
  const parts = [`${name}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (opts.secure) parts.push('Secure');
  if (opts.maxAge !== undefined) {
    parts.push(`Max-Age=${opts.maxAge}`);
    if (opts.maxAge === 0) parts.push('Expires=Thu, 01 Jan 1970 00:00:00 GMT');
  }
  ctx.append('Set-Cookie', parts.join('; '));
}

export function readCookie(ctx: Koa.Context, name: string): string | undefined {
  return cookieFromHeader(ctx.get('Cookie'), name);
}

/** A cookie's value from a Cookie header (also of a WebSocket upgrade, which Koa does not see). */
export function cookieFromHeader(header: string | undefined, name: string): string | undefined {
  for (const part of (header || '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
