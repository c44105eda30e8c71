import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import type { Logger } from '../log.js';
import { purgedSubmissions } from '../metrics/registry.js';
import { purgeOlderThan, retentionCutoff, type PurgeCounts } from './purge.js';

// The background purge, part of the sender component (the API unit): soon after start
// and then every hour, submissions older than RUNBOX_RETENTION_DAYS go, batch by batch
// (src/retention/purge.ts). With several API hosts one batch runs at a time: a host
// whose batch finds another's running ends its pass and leaves the purge to that one.

export const PURGE_EVERY_MS = 60 * 60 * 1000;
const FIRST_PASS_MS = 60 * 1000;

export interface Purger {
  /** One pass now; null when another process holds the purge. */
  runOnce(): Promise<PurgeCounts | null>;
  stop(): Promise<void>;
}

/** One pass; null when another process was purging (its batch held the purge when this one began). */
export async function purgeOnce(db: Db, days: number, signal?: AbortSignal, log?: Logger, onBatch?: () => void): Promise<PurgeCounts | null> {
  const cutoff = await retentionCutoff(db, days);
  const t0 = performance.now();
  const counts = await purgeOlderThan(db, cutoff, {
    ...(signal ? { signal } : {}),
    onBatch: (b) => {
      purgedSubmissions.inc(b.submissions);
      onBatch?.();
    },
  });
  if (counts.submissions > 0) {
    log?.info({ submissions: counts.submissions, deliveries: counts.deliveries, older_than: cutoff.toISOString(), ms: Math.round(performance.now() - t0) }, 'purged submissions past the retention');
  }
  if (counts.busy && counts.submissions === 0) return null;
  return { submissions: counts.submissions, deliveries: counts.deliveries };
}

export function startPurger(deps: { db: Db; config: Config; log: Logger }): Purger {
  const days = deps.config.RUNBOX_RETENTION_DAYS;
  const log = deps.log.child({ component: 'purge' });
  const stopping = new AbortController();
  let running: Promise<unknown> = Promise.resolve();
  const runOnce = async () => {
    if (days === 0) return { submissions: 0, deliveries: 0 };
    const pass = purgeOnce(deps.db, days, stopping.signal, log);
    running = pass.catch(() => {});
    return pass;
  };
  const tick = () => {
    void runOnce().catch((err: Error) => log.warn({ err: err.message }, 'purging old submissions failed; trying again at the next pass'));
  };
  // Retention 0 keeps everything: no timer at all.
  const first = days > 0 ? setTimeout(tick, FIRST_PASS_MS) : undefined;
  const every = days > 0 ? setInterval(tick, PURGE_EVERY_MS) : undefined;
  first?.unref();
  every?.unref();
  return {
    runOnce,
    stop: async () => {
      clearTimeout(first);
      clearInterval(every);
      stopping.abort();
      await running;
    },
  };
}
