import { compatRoutes } from '../../compat/index.js';
import { openApiDocument } from '../openapi.js';
import type { RouteDef } from '../route.js';
import { routes } from './index.js';

// GET /api/openapi.json: generated from the route declarations and their schemas.
export const openApiRoute: RouteDef = {
  method: 'GET',
  path: '/api/openapi.json',
  operationId: 'getOpenApi',
  summary: 'This OpenAPI 3.1 document.',
  auth: 'none',
  responses: { 200: { description: 'The OpenAPI document.' } },
  errors: [405, 406],
  handler: () => {
    let doc: object | undefined;
    return async (ctx) => {
      doc ??= openApiDocument(routes(), compatRoutes());
      ctx.body = doc;
    };
  },
};
