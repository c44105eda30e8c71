import { sql } from 'kysely';
import { type Db, poolOf, poolQuery } from '../db/connect.js';
import { USAGE_THRESHOLDS } from '../email/thresholds.js';
import { retryOnConflict } from '../queue/retry.js';
import { WAITING_MODES } from './modes.js';

// Group commit of admissions: each API process gathers the admissions that arrive
// within about a millisecond (or up to MAX_BATCH) and stores them with ONE call of
// runbox_admit (migrations 0011, 0013): one statement, one round trip, one commit and WAL
// flush for the batch. Every caller is answered only after that commit. Rejections are
// rows of the answer, so a refused request does not abort the others; a batch that
// fails as a whole (a deadlock is retried; anything else, such as a caller-chosen id
// already taken) is re-run one request at a time, so only the faulty request fails.

/** One admission as runbox_admit reads it (jsonb_to_recordset column names). */
export interface AdmitInput {
  account: string;
  key: string | null;
  id: string | null;
  compiler: string;
  code: string;
  input: string | null;
  tests: unknown;
  /** extra_params as JSON text, stored as is (json, not jsonb). */
  extra: string | null;
  run_options: unknown;
  callback: unknown;
  compat: unknown;
  mode: string;
  /** The mode is one of WAITING_MODES: refused rather than queued when no slot is free. */
  waiting: boolean;
  priority: number;
  units: number;
  month: string;
  max_attempts: number;
  created_at: string;
  window_start: string;
  fresh_seconds: number;
  /** The most sandbox time the request asks for (src/limits.ts requestSandboxMs). */
  sandbox_ms: number;
}

/** runbox_admit's answer for one request: the id, or the reason with the figures its message needs. */
export interface AdmitRow {
  n: number;
  id: string | null;
  reason: string | null;
  monthly_limit: number | null;
  per_minute: number | null;
  pending_limit: number | null;
  tests_per_request: number | null;
  running_limit: number | null;
  used: number | null;
  key_used: number | null;
  key_limit: number | null;
  /** Submissions (tests) in the rolling minute before this one. */
  last_minute: number | null;
  oldest_in_window: Date | null;
  capacity: number | null;
  /** The plan's sandbox seconds per request (migration 0013). */
  sandbox_seconds: number | null;
  /** rate_limited: when enough of the window's tests will have left it for this request's. */
  window_frees_at: Date | null;
}

export const MAX_BATCH = 32;
/** How long the first admission of a batch waits for others while a batch is already being stored. */
const GATHER_MS = 1;

const ADMIT_SQL = 'SELECT * FROM runbox_admit($1::jsonb, $2::int[], $3::text[])';
const thresholds = [...USAGE_THRESHOLDS];
const waitingModes = [...WAITING_MODES];

interface Pending {
  input: AdmitInput;
  resolve(row: AdmitRow): void;
  reject(err: unknown): void;
}

/** One statement for the whole batch: a named prepared statement when the pool is known, else through Kysely. */
async function runBatch(db: Db, inputs: AdmitInput[]): Promise<AdmitRow[]> {
  const json = JSON.stringify(inputs.map((input, n) => ({ ...input, n })));
  const known = poolOf(db);
  if (known) {
    // Named where the pool's connections are its own; the function's inner statements are
    // planned once per server connection either way (PL/pgSQL caches them).
    const name = known.named ? 'runbox_admit' : undefined;
    const res = await poolQuery<AdmitRow>(known.pool, { ...(name ? { name } : {}), text: ADMIT_SQL, values: [json, thresholds, waitingModes] });
    return res.rows;
  }
  const { rows } = await sql<AdmitRow>`SELECT * FROM runbox_admit(${json}::jsonb, ${thresholds}::int[], ${waitingModes}::text[])`.execute(db);
  return rows;
}

export class AdmissionBatcher {
  private queue: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private inFlight = 0;

  constructor(private readonly db: Db) {}

  admit(input: AdmitInput): Promise<AdmitRow> {
    return new Promise<AdmitRow>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (this.queue.length >= MAX_BATCH) return this.flush();
      if (this.scheduled) return;
      this.scheduled = true;
      // Idle: store what arrived in this turn of the event loop. Busy: gather a little longer.
      if (this.inFlight === 0) setImmediate(() => this.flush());
      else this.timer = setTimeout(() => this.flush(), GATHER_MS);
    });
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = false;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, MAX_BATCH);
      this.inFlight++;
      void this.store(batch).finally(() => this.inFlight--);
    }
  }

  private async store(batch: Pending[]): Promise<void> {
    let rows: AdmitRow[];
    try {
      rows = await retryOnConflict(() => runBatch(this.db, batch.map((p) => p.input)));
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // Something in the batch failed the whole statement: each request on its own.
      await Promise.all(batch.map((p) => this.store([p])));
      return;
    }
    for (const row of rows) batch[row.n]?.resolve(row);
    // Settled promises ignore this; it only reaches a request the answer left out.
    for (const p of batch) p.reject(new Error('admission returned no answer'));
  }
}

const batchers = new WeakMap<Db, AdmissionBatcher>();

/** The process's batcher for this database handle. */
export function admissionBatcher(db: Db): AdmissionBatcher {
  let b = batchers.get(db);
  if (!b) batchers.set(db, (b = new AdmissionBatcher(db)));
  return b;
}
