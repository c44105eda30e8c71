import { sql } from 'kysely';
import type { Clock } from '../util/clock.js';
import type { Db } from './connect.js';

// The database's time, read without a round trip: the API's admission (the month billed,
// the rolling minute, created_at) and its usage figures go by it, as the queue's leases
// do (now() in their statements), so an API host whose own clock is wrong or stepped
// bills and limits exactly as the others. Sampled from Postgres's clock_timestamp() and
// carried forward on the monotonic clock, which a step of the host's clock does not move;
// sampled again every minute. Off by at most half a round trip to the database.

export interface DatabaseClock extends Clock {
  /** Whether a sample has been taken (before that: the host's clock). */
  readonly synced: boolean;
  close(): void;
}

const RESYNC_MS = 60_000;
/** Until the first sample succeeds (database down at start), tried this often. */
const RETRY_MS = 1000;

export async function databaseClock(db: Db): Promise<DatabaseClock> {
  let base: { dbMs: number; mono: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  const sample = async () => {
    try {
      const before = performance.now();
      const { rows } = await sql<{ ms: string }>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8::text AS ms`.execute(db);
      const after = performance.now();
      base = { dbMs: Number(rows[0]!.ms), mono: (before + after) / 2 };
    } catch {
      // Unreachable: the last sample (or the host's clock) stands until the next try.
    }
    if (!closed) {
      timer = setTimeout(() => void sample(), base ? RESYNC_MS : RETRY_MS);
      timer.unref();
    }
  };
  await sample();
  return {
    now: () => (base ? new Date(base.dbMs + (performance.now() - base.mono)) : new Date()),
    get synced() {
      return base !== undefined;
    },
    close: () => {
      closed = true;
      clearTimeout(timer);
    },
  };
}
