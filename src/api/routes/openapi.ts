import { compatRoutes } from '../../compat/index.js';
import { catalogue, offeredIds, type Catalogue } from '../../compilers/catalogue.js';
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
  handler: ({ config }) => {
    // Made again only when the catalogue changes (an operator's recipe added or removed).
    let made: { from: Catalogue; doc: object } | undefined;
    return async (ctx) => {
      const cat = catalogue(config.RUNBOX_RECIPES_DIR);
      if (made?.from !== cat) {
        made = { from: cat, doc: openApiDocument(routes(), compatRoutes(), offeredIds(cat)) };
      }
      ctx.body = made.doc;
    };
  },
};
