import { sql, type RawBuilder } from 'kysely';

// The retry rule of every outbox (callback deliveries, usage emails): after the n-th
// failed attempt the row waits backoffMs × 2^(n − 1), with ±25% jitter so that many
// rows failing together do not retry together. Computed in SQL, so every worker agrees.

export interface RetryPolicy {
  /** Attempts in all; after the last failed one the row is dead. */
  maxAttempts: number;
  /** Delay after the first failed attempt; doubled after each further one. */
  backoffMs: number;
}

/** The next attempt's time, as a SQL expression over the row's `attempts` column (already counting the failed attempt). */
export function nextAttemptAt(backoffMs: number): RawBuilder<Date> {
  return sql<Date>`now() + make_interval(secs =>
    ${backoffMs / 1000}::float8 * power(2, least(attempts - 1, 30)) * (0.75 + random() * 0.5))`;
}
