import type { RouteDef } from '../route.js';
import { compilersRoute } from './compilers.js';
import { limitsRoute } from './limits.js';
import { openApiRoute } from './openapi.js';
import { runCodeRoute } from './run-code.js';
import { usageRoute } from './usage.js';

// Every route of the API: a new endpoint is one file in this folder and one line here.
export function routes(): RouteDef[] {
  return [
    runCodeRoute,
    usageRoute,
    limitsRoute,
    compilersRoute,
    openApiRoute,
  ];
}
