import type { KeyCache } from '../accounts/key-cache.js';
import type { TSchema } from 'typebox';
import type Koa from 'koa';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { SubmissionMode } from '../db/schema.js';
import type { Clock } from '../util/clock.js';
import type { KeyContext } from '../accounts/accounts.js';
import type { MarketplaceCaller } from '../accounts/marketplace.js';
import type { RateFigures } from '../quota/usage.js';
import type { LiveResults } from './live.js';

// What a route declares. app.ts builds each route's middleware stack from these flags,
// and openapi.ts documents the route from the same declaration.

export interface ApiDeps {
  db: Db;
  config: Config;
  clock: Clock;
  /** How long one process trusts its last read of the maintenance flag. */
  maintenanceCacheMs?: number;
  log?: ApiLog;
  /** Run ends and live output (synchronous runs, WebSocket); startApi provides it. */
  live?: LiveResults;
  /** API keys cached by this process; startApi provides it. Without it every request looks its key up. */
  keys?: KeyCache;
  /** Admits batches' items as their accounts' limits free up; startApi provides it. */
  batches?: { kick(): void; close(): Promise<void> };
}

export interface ApiState {
  /** Set by authenticate() on routes that take a key: the key's, or a marketplace subscriber's (no key). */
  auth?: KeyContext | MarketplaceCaller;
  /** Set by authenticate() on admin routes: the admin key used. */
  admin?: { id: string; label: string };
  /** Set by jsonBody() on routes that declare a body schema: the validated body. */
  body?: unknown;
  /** Set by admission() (or the route): the counts behind the rate-limit headers. */
  rate?: RateFigures;
  /** Set by jsonBody() with it: the body's text as received (extra_params is echoed from it verbatim). */
  rawBody?: string;
  /** Set by admission() on routes that admit a run: the stored submission. */
  submission?: { id: string; units: number; /** performance.now() before it was stored. */ admittedAt?: number };
}

export type ApiContext = Koa.ParameterizedContext<ApiState>;

export interface ResponseDoc {
  description: string;
  /** JSON body schema; omitted for plain-text answers. */
  schema?: TSchema;
  contentType?: 'application/json' | 'text/plain';
  headers?: Record<string, { description: string; schema: TSchema }>;
}

export interface RouteDef {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** @koa/router path; a trailing slash is optional for callers. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  /** 'key': an API key in Authorization (401 otherwise). 'admin': an admin key (401 without a valid key, 403 for an API key). */
  auth: 'none' | 'key' | 'admin';
  /** Answered 503 while the service is in maintenance mode. */
  maintenance?: boolean;
  /** Query parameters (all text), documented as OpenAPI parameters; the handler validates them (400). */
  query?: TSchema;
  /** JSON request body, validated (400) before the handler runs. */
  body?: TSchema;
  /** Largest JSON body taken (default REQUEST_LIMITS.bodyMaxBytes). */
  bodyMaxBytes?: number;
  /** Bodies of other types the handler reads itself (readRawBody), by Content-Type: a problem package as application/zip. */
  otherBodies?: Record<string, { description: string; maxBytes: number }>;
  /** The body is a RunCodeRequest to admit as a job of this mode (limit checks, 429) before the handler runs. */
  admits?: SubmissionMode;
  /** Writes the account's problems: counted against PROBLEM_LIMITS.writesPerMinute (429 past it) before the body is read. */
  problemWrite?: boolean;
  /** Every answer, once the caller is known, carries the X-RateLimit-* headers (src/api/middleware/rate-limit-headers.ts). */
  rateLimitHeaders?: boolean;
  /** OpenAPI tags (the compatible APIs list their routes under their own). */
  tags?: string[];
  /** The error body when it is not runbox's {"error":{code,message}} (the compatible APIs answer in their own shapes). */
  errorBody?: TSchema;
  /** Documented answers besides the common error answers. */
  responses: Record<number, ResponseDoc>;
  /** A WebSocket endpoint's messages, each direction a union told apart by `type` (OpenAPI x-websocket-messages). */
  webSocket?: { client: TSchema; server: TSchema };
  /** Error statuses this route can answer, documented with the common error body. */
  errors: number[];
  handler(deps: ApiDeps): (ctx: ApiContext, next: Koa.Next) => Promise<void>;
}

export interface ApiLog {
  error(obj: object, msg?: string): void;
  info?(obj: object, msg?: string): void;
}
