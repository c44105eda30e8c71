import type { RouteDef } from '../route.js';
import { adminRoutes } from './admin.js';
import { apiIndexRoute } from './api-index.js';
import { compilersRoute } from './compilers.js';
import { healthRoute } from './health.js';
import { limitsRoute } from './limits.js';
import { metricsRoute } from './metrics.js';
import { openApiRoute } from './openapi.js';
import { problemRoutes } from './problems.js';
import { runCodeRoute } from './run-code.js';
import { runCodeSyncRoute } from './run-code-sync.js';
import { batchRoutes } from './batches.js';
import { sessionRoutes } from './sessions.js';
import { submissionListRoute } from './submission-list.js';
import { submissionsRoute } from './submissions.js';
import { usageRoute } from './usage.js';
import { wsRoute } from './ws.js';

// Every route of the API: a new endpoint is one file in this folder and one line here.
export function routes(): RouteDef[] {
  return [
    apiIndexRoute,
    runCodeRoute,
    runCodeSyncRoute,
    submissionListRoute,
    submissionsRoute,
    ...sessionRoutes,
    ...batchRoutes,
    ...problemRoutes,
    wsRoute,
    usageRoute,
    limitsRoute,
    compilersRoute,
    openApiRoute,
    healthRoute,
    metricsRoute,
    ...adminRoutes,
  ];
}
