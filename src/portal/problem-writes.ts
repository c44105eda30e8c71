import type { Db } from '../db/connect.js';
import { PROBLEM_LIMITS } from '../limits.js';
import { admitProblemWrite } from '../problems/write-limit.js';
import { PortalError, type PortalContext } from './state.js';

/** Counts a problem write from the portal (as the API does); 429 with Retry-After past the per-minute bound. */
export async function admitPortalProblemWrite(db: Db, c: PortalContext): Promise<void> {
  const refused = await admitProblemWrite(db, c.state.session!.accountId);
  if (!refused) return;
  c.set('Retry-After', String(refused.retryAfterSeconds));
  throw new PortalError(429, `You can store, replace or delete ${PROBLEM_LIMITS.writesPerMinute} problems a minute. Try again in ${refused.retryAfterSeconds} seconds.`);
}
