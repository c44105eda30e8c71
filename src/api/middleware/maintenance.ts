import type Koa from 'koa';
import { ApiError } from '../errors.js';
import type { MaintenanceFlag } from '../maintenance.js';
import type { RouteDef } from '../route.js';

/** How long a client should wait before retrying during maintenance. */
const MAINTENANCE_RETRY_SECONDS = 60;

/** 503 maintenance while the operator has switched maintenance mode on (the run routes, the MCP face's run tools). */
export async function refuseInMaintenance(flag: MaintenanceFlag): Promise<void> {
  if (await flag.isOn()) {
    throw new ApiError(503, 'maintenance', 'the service is temporarily offline for maintenance; try again later', {
      'Retry-After': String(MAINTENANCE_RETRY_SECONDS),
    });
  }
}

// 503 on the run routes while the operator has switched maintenance mode on.
export function maintenanceGate(route: RouteDef, flag: MaintenanceFlag): Koa.Middleware {
  return async (_ctx, next) => {
    if (route.maintenance) await refuseInMaintenance(flag);
    await next();
  };
}
