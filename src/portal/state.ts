import type Koa from 'koa';
import type { ApiDeps } from '../api/route.js';
import type { Session } from './sessions.js';
import type { Upload } from './upload.js';
import type { PageContext } from './views/layout.js';

// What every portal handler sees: the session (when signed in) and the CSRF token that
// its forms must carry.

export interface PortalState {
  session?: Session;
  csrf: string;
  /** A form's file (multipart/form-data: the problem package), read by src/portal/upload.ts. */
  upload?: Upload;
  /** Every file of such a form (the test form sends an input and an expected output). */
  uploads?: Upload[];
}

export type PortalContext = Koa.ParameterizedContext<PortalState> & { params: Record<string, string> };
export type PortalDeps = ApiDeps;

export function pageContext(ctx: PortalContext): PageContext {
  return { email: ctx.state.session?.email, csrf: ctx.state.csrf, path: ctx.path };
}

/** Where this portal is reached: RUNBOX_PUBLIC_URL, else the address of this request. */
export function baseUrl(ctx: Koa.Context, config: PortalDeps['config']): string {
  return config.RUNBOX_PUBLIC_URL ? config.RUNBOX_PUBLIC_URL.replace(/\/+$/, '') : `${ctx.protocol}://${ctx.host}`;
}

/** A field of the urlencoded form body as a string ('' when absent or repeated oddly). */
export function field(ctx: PortalContext, name: string): string {
  const body = (ctx.request as unknown as { body?: Record<string, unknown> }).body ?? {};
  const v = body[name];
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '';
}

/** A field the form repeats (one per file, per test), in the form's order; [] when absent. */
export function fieldList(ctx: PortalContext, name: string): string[] {
  const body = (ctx.request as unknown as { body?: Record<string, unknown> }).body ?? {};
  const v = body[name];
  if (typeof v === 'string') return [v];
  // Past 20 repeats the form parser (qs) gives an object keyed by position instead of an array.
  const list = Array.isArray(v) ? v : v !== null && typeof v === 'object' && Object.keys(v).every((k) => /^\d+$/.test(k)) ? Object.values(v) : [];
  return list.filter((x): x is string => typeof x === 'string');
}

/** An error answered as an HTML page with this status (404 for anything not the caller's). */
export class PortalError extends Error {
  constructor(
    public readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = () => new PortalError(404, 'There is nothing here, or it is not yours.');
