import { registry, watchQueue } from '../../metrics/registry.js';
import type { RouteDef } from '../route.js';

// GET /metrics on the API port, behind an admin key: the same text as the admin
// listener's, for deployments that expose no second port.
export const metricsRoute: RouteDef = {
  method: 'GET',
  path: '/metrics',
  operationId: 'getMetrics',
  summary: "This process's metrics in the Prometheus text format (admin key).",
  auth: 'admin',
  responses: { 200: { description: 'Prometheus text format.', contentType: 'text/plain' } },
  errors: [401, 403, 405],
  handler: ({ db, config }) => {
    // The deployment-wide gauges read this API's database.
    watchQueue(db, config.RUNBOX_LEASE_SECONDS);
    return async (ctx) => {
      ctx.type = registry.contentType;
      ctx.body = await registry.metrics();
    };
  },
};
