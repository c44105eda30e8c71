import { databaseUnavailable } from '../db/unavailable.js';

// A run's outcome is written under the runner's claim (runner id and attempt), so trying
// again is always safe: the statement either stores it while the claim holds or is
// refused once another runner has the job. A runner that cannot reach the database when
// its run ends (a partition, a restart) therefore keeps trying, for up to twice the lease,
// rather than dropping a result the database may yet take: meanwhile its heart-beats keep
// the lease if they get through, and once the link is back the outcome is stored, or
// refused and the job's new holder's result stands.

export interface RecordOptions {
  /** Give up after this long (then the lease runs out and the job runs again). */
  forMs: number;
  /** Told once, at the first failure. */
  onRetry?: (err: Error) => void;
  /** First wait between tries; it doubles up to maxDelayMs. */
  delayMs?: number;
  maxDelayMs?: number;
}

export async function recordOutcome<T>(write: () => Promise<T>, o: RecordOptions): Promise<T> {
  const giveUpAt = performance.now() + o.forMs;
  let delay = o.delayMs ?? 250;
  for (let tries = 1; ; tries++) {
    try {
      return await write();
    } catch (err) {
      if (!databaseUnavailable(err) || performance.now() + delay > giveUpAt) throw err;
      if (tries === 1) o.onRetry?.(err as Error);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, o.maxDelayMs ?? 2000);
    }
  }
}
