import type { CompatApi } from './mount.js';
import { jobeApi } from './jobe/routes.js';
import { judge0Api } from './judge0/routes.js';
import { pistonApi } from './piston/routes.js';

// The compatible APIs mounted beside runbox's own (src/api/app.ts), and documented in
// its OpenAPI document under their own tags.
export const COMPAT_APIS: CompatApi[] = [pistonApi, judge0Api, jobeApi];

export const compatRoutes = () => COMPAT_APIS.flatMap((api) => api.routes);
