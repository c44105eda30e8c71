import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { REQUEST_LIMITS } from '../../limits.js';
import { ApiError } from '../errors.js';
import { JsonTextError, parseClientJson } from '../json-text.js';
import type { ApiState, RouteDef } from '../route.js';
import { unknownField } from '../schemas.js';

// The JSON body of routes that declare one, read by hand so that every failure is a
// clear 400: wrong Content-Type, too large, invalid UTF-8 (rejected, never replaced),
// too deeply nested, not JSON, not valid Unicode (src/api/json-text.ts), a field the
// schema does not take (named), or not
// matching the route's schema.

/** Bytes of an oversized body we still read and discard, so the client sees our answer. */
const DISCARD_MAX_BYTES = 64 * 1024 * 1024;

const bad = (code: string, message: string): ApiError => new ApiError(400, code, message);

function readRaw(req: IncomingMessage, maxBytes: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        tooLarge = true;
        chunks.length = 0;
        if (size > DISCARD_MAX_BYTES) {
          req.destroy();
          resolve('too_large');
        }
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(tooLarge ? 'too_large' : Buffer.concat(chunks)));
    req.on('error', reject);
    // A client that goes away mid-body never sends 'end'; settle instead of waiting forever.
    req.on('close', () => {
      if (!req.complete) reject(bad('incomplete_body', 'the body ended before its announced length'));
    });
  });
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

function describe(e: SchemaError): string {
  const field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const where = field === '' ? 'the body' : field;
  switch (e.keyword) {
    case 'required': {
      const missing = (e.params.requiredProperties as string[]).join(', ');
      return field === '' ? `missing required field ${missing}` : `${where}: missing required field ${missing}`;
    }
    case 'type':
    {
      const type = String(e.params.type);
      return `${where} must be ${type === 'object' ? 'a JSON object' : /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`}`;
    }
    case 'enum':
      return `${where} must be one of: ${(e.params.allowedValues as string[]).join(', ')}`;
    case 'pattern':
      return String(e.params.pattern).includes('\\u0000') ? `${where} must not contain NUL characters` : `${where} ${e.message}`;
    default:
      return `${where} ${e.message}`;
  }
}

const checkers = new WeakMap<TSchema, ReturnType<typeof Compile>>();

export function validate<T>(schema: TSchema, value: unknown): T {
  const unknown = unknownField(schema, value);
  if (unknown) throw new ApiError(400, 'unknown_field', unknown);
  let check = checkers.get(schema);
  if (!check) {
    check = Compile(schema);
    checkers.set(schema, check);
  }
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0] as SchemaError | undefined;
    throw bad('invalid_request', first ? describe(first) : 'the body does not match the request schema');
  }
  return value as T;
}

/**
 * Reads the request's JSON body with every check above. `acceptText`: a body sent as
 * text/plain (or with no Content-Type) is read as JSON too, for clients that cannot
 * set the header (the Piston compatible routes).
 */
export async function readJsonBody(ctx: Koa.Context, options: { acceptText?: boolean; maxBytes?: number; otherTypes?: string[] } = {}): Promise<unknown> {
  // Koa's `is` answers false for any type when there is no body at all.
  if (!ctx.request.length && !ctx.get('Transfer-Encoding')) throw bad('invalid_json', 'the body is empty; a JSON object is required');
  const typeOk = ctx.request.is('application/json') || (options.acceptText && (!ctx.get('Content-Type') || ctx.request.is('text/plain')));
  if (!typeOk) {
    const types = ['application/json', ...(options.otherTypes ?? [])].join(' or ');
    throw bad('unsupported_content_type', `Content-Type must be ${types}, not ${ctx.get('Content-Type') || '(none)'}`);
  }
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw bad('unsupported_charset', `the body must be UTF-8, not ${charset}`);
  }
  const raw = await readRawBody(ctx, options.maxBytes ?? REQUEST_LIMITS.bodyMaxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw bad('invalid_utf8', 'the body is not valid UTF-8');
  }
  if (text.trim() === '') throw bad('invalid_json', 'the body is empty; a JSON object is required');
  let value: unknown;
  try {
    value = parseClientJson(text, 'the body');
  } catch (err) {
    if (err instanceof JsonTextError) throw bad(err.code, err.message);
    throw err;
  }
  // Kept for what must be echoed exactly as the client wrote it (extra_params).
  (ctx.state as ApiState).rawBody = text;
  return value;
}

/** The body's bytes, at most `max` (400 body_too_large past it, the connection then closed). */
export async function readRawBody(ctx: Koa.Context, max: number): Promise<Buffer> {
  const tooLarge = bad('body_too_large', `the body is larger than ${max} bytes`);
  const declared = Number(ctx.get('Content-Length') || '0');
  if (declared > Math.max(max, DISCARD_MAX_BYTES)) {
    ctx.set('Connection', 'close');
    throw tooLarge;
  }
  const raw = await readRaw(ctx.req, max);
  if (raw === 'too_large') {
    ctx.set('Connection', 'close');
    throw tooLarge;
  }
  return raw;
}

export function jsonBody(route: RouteDef): Koa.Middleware<ApiState> {
  const otherTypes = Object.keys(route.otherBodies ?? {});
  return async (ctx, next) => {
    if (!route.body) return next();
    // A body of another declared type is the handler's to read.
    if (otherTypes.length > 0 && ctx.request.length && ctx.request.is(otherTypes)) return next();
    ctx.state.body = validate(route.body, await readJsonBody(ctx, { maxBytes: route.bodyMaxBytes, otherTypes }));
    await next();
  };
}
