import type { RouteDef } from './route.js';
import { ErrorBody } from './schemas.js';

// The OpenAPI 3.1 document, generated from the route declarations: the same TypeBox
// schemas that validate requests are the documented schemas (3.1 uses JSON Schema).

const ERROR_TEXT: Record<number, string> = {
  400: 'Bad request: the request is invalid (see error.code and error.message).',
  401: 'Unauthorized: the API key is missing, wrong or revoked.',
  403: 'Forbidden: the resource is restricted to administrators, or the key is a widget key (widget_key: it works only over the WebSocket).',
  404: 'Not found.',
  405: 'Method not allowed; the Allow header lists the allowed methods.',
  406: 'Not acceptable: the Accept header admits neither JSON nor plain text.',
  410: 'Gone: the submission was deleted by the retention (submission_expired; RUNBOX_RETENTION_DAYS).',
  415: 'Unsupported media type: the body is not JSON (Piston compatible routes).',
  422: 'Unprocessable: a field is invalid; each named with its messages (Judge0 compatible routes).',
  426: 'Upgrade required: a WebSocket endpoint reached without the upgrade.',
  429: 'Too many requests; error.code is rate_limited, too_many_pending, monthly_limit or key_monthly_limit (synchronous runs also too_many_running or capacity); Retry-After gives seconds.',
  500: 'Internal server error. Try again later.',
  503: 'Temporarily offline for maintenance. Try again later.',
};

/** Plain JSON copy of a schema (drops TypeBox's non-enumerable bookkeeping). */
export const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

/** A query schema's properties as OpenAPI query parameters. */
function queryParameters(schema: unknown): object[] {
  const { properties = {}, required = [] } = plain(schema) as { properties?: Record<string, { description?: string }>; required?: string[] };
  return Object.entries(properties).map(([name, s]) => {
    const { description, ...rest } = s;
    return { name, in: 'query', required: required.includes(name), ...(description ? { description } : {}), schema: rest };
  });
}

/** The document with every compiler identifier field (CompilerIdSchema) given the catalogue's ids as its enum. */
export function withCompilerEnum(value: unknown, ids: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => withCompilerEnum(v, ids));
  if (value === null || typeof value !== 'object') return value;
  const { 'x-runbox-compiler-id': marked, ...rest } = value as Record<string, unknown>;
  const out = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, withCompilerEnum(v, ids)]));
  return marked === true ? { ...out, type: 'string', enum: ids } : out;
}

/**
 * The document of runbox's own routes and of the compatible APIs' (src/compat), which
 * take API keys only: a marketplace call is authenticated by runbox's own routes alone.
 */
export function openApiDocument(routes: RouteDef[], compatRoutes: RouteDef[] = [], compilerIds: string[] = []): object {
  const paths: Record<string, Record<string, unknown>> = {};
  const compat = new Set(compatRoutes);
  const all = [...routes, ...compatRoutes];
  for (const route of all) {
    // :name and a wildcard's {*name} are both {name} in the document.
    const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\{\*([A-Za-z_]+)\}/g, '{$1}');
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(route.responses)) {
      const type = doc.contentType ?? 'application/json';
      responses[status] = {
        description: doc.description,
        ...(doc.headers
          ? { headers: Object.fromEntries(Object.entries(doc.headers).map(([h, d]) => [h, { description: d.description, schema: plain(d.schema) }])) }
          : {}),
        content: { [type]: { schema: doc.schema ? plain(doc.schema) : { type: type === 'text/plain' ? 'string' : 'object' } } },
      };
    }
    for (const status of route.errors) {
      responses[String(status)] = {
        description: ERROR_TEXT[status] ?? 'Error.',
        content: { 'application/json': { schema: route.errorBody ? plain(route.errorBody) : { $ref: '#/components/schemas/Error' } } },
      };
    }
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      operationId: route.operationId,
      ...(route.tags ? { tags: route.tags } : {}),
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      // runbox's routes that take a key also take a marketplace call (src/accounts/marketplace.ts).
      security: route.auth === 'none' ? [] : route.auth === 'key' && !compat.has(route) ? [{ apiKey: [] }, { marketplace: [] }] : [{ apiKey: [] }],
      ...(route.query ? { parameters: queryParameters(route.query) } : {}),
      ...(route.body
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': { schema: plain(route.body) },
                ...Object.fromEntries(Object.entries(route.otherBodies ?? {}).map(([type, d]) => [type, { schema: { type: 'string', format: 'binary', description: d.description } }])),
              },
            },
          }
        : {}),
      responses,
      ...(route.webSocket ? { 'x-websocket-messages': { client: plain(route.webSocket.client), server: plain(route.webSocket.server) } } : {}),
    };
  }
  const tagNames = [...new Set(all.flatMap((r) => r.tags ?? []))];
  return withCompilerEnum({
    openapi: '3.1.0',
    info: {
      title: 'runbox',
      version: '2',
      description: `Online code execution. Compilers: ${compilerIds.join(', ')}.`,
    },
    ...(tagNames.length > 0 ? { tags: tagNames.map((name) => ({ name })) } : {}),
    paths,
    components: {
      schemas: { Error: plain(ErrorBody) },
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The API key as the whole header value; `Bearer <key>` is accepted too.',
        },
        marketplace: {
          type: 'apiKey',
          in: 'header',
          name: 'X-RapidAPI-Proxy-Secret',
          description:
            'An API marketplace calling for its subscriber (X-RapidAPI-User, plan from X-RapidAPI-Subscription), when the service is configured with RUNBOX_MARKETPLACE_PROXY_SECRET. No key: no callback, no key object in usage.',
        },
      },
    },
  }, compilerIds) as object;
}
