import Type, { type Static } from 'typebox';
import { compatRoutes } from '../../compat/index.js';
import type { RouteDef } from '../route.js';
import { routes } from './index.js';

// GET /api/: where to start (`npm start` prints this address). Lists every endpoint
// from the same route declarations as the OpenAPI document, and links to it.

const Endpoint = Type.Object({
  method: Type.String(),
  path: Type.String(),
  summary: Type.String(),
  auth: Type.Enum(['none', 'key', 'admin'], { description: 'none: open; key: an API key in Authorization; admin: an admin key.' }),
});

export const ApiIndex = Type.Object({
  service: Type.Literal('runbox'),
  openapi: Type.String({ description: 'The OpenAPI 3.1 document: every endpoint with its request and answer schemas.' }),
  endpoints: Type.Array(Endpoint, { description: "runbox's own endpoints, then the Piston and Judge0 compatible ones." }),
});

const OPENAPI_PATH = '/api/openapi.json';

function apiIndex(): Static<typeof ApiIndex> {
  const endpoint = (r: RouteDef): Static<typeof Endpoint> => ({
    method: r.method,
    // A wildcard ({*path}: the rest of the path, slashes and all) is listed as a parameter like the others.
    path: r.path.replace(/\{\*([A-Za-z_]+)\}/g, ':$1'),
    summary: r.summary,
    // A WebSocket's key is checked at its upgrade, not by the route (whose plain GET answers 426).
    auth: r.webSocket ? 'key' : r.auth,
  });
  return { service: 'runbox', openapi: OPENAPI_PATH, endpoints: [...routes(), ...compatRoutes()].map(endpoint) };
}

export const apiIndexRoute: RouteDef = {
  method: 'GET',
  path: '/api/',
  operationId: 'getApiIndex',
  summary: `The endpoints of this API, and a link to its OpenAPI document (${OPENAPI_PATH}).`,
  auth: 'none',
  responses: { 200: { description: 'The index.', schema: ApiIndex } },
  errors: [405, 406],
  handler: () => {
    let doc: Static<typeof ApiIndex> | undefined;
    return async (ctx) => {
      doc ??= apiIndex();
      ctx.body = doc;
    };
  },
};
