import { sql, type Transaction } from 'kysely';
import type { CompilerId } from '../compilers/ids.js';
import type { Db } from '../db/connect.js';
import type { CallbackTarget, Database, RunOptions, SubmissionMode } from '../db/schema.js';
import { enqueueUsageEmails } from '../email/enqueue.js';
import { RATE_WINDOW_MS } from '../limits.js';
import { retryOnConflict } from '../queue/retry.js';
import { monthOf, nextMonthStart } from '../util/clock.js';
import type { RateFigures } from './usage.js';

// Admission: every per-account limit checked and the job row inserted in ONE
// transaction that holds the account row's lock. Two API processes admitting for the
// same account therefore take turns, so the counts they read are exact and a limit can
// never be overshot. A rejected request writes nothing.

export interface AdmissionRequest {
  accountId: string;
  /** Null for calls without a key context. */
  keyId: string | null;
  compiler: CompilerId;
  code: string;
  input: string | null;
  /** Multi-test request: each test is billed as one submission. */
  tests: { input: string }[] | null;
  extraParams: Record<string, unknown> | null;
  /** extraParams as the client wrote it (JSON text), stored as is so results echo it unchanged; default: extraParams serialized. */
  extraParamsJson?: string;
  /** Extra files, program arguments, lower stage limits (the compatible routes). */
  runOptions?: RunOptions | null;
  /** A callback target of this submission's own, instead of the key's redirect URL. */
  callback?: CallbackTarget | null;
  /** What a compatible route keeps with the submission to answer in its own shape. */
  compat?: Record<string, unknown> | null;
  mode?: SubmissionMode;
  maxAttempts: number;
  /** The submission's id, chosen by the caller (a WebSocket session listens for its output before it exists). */
  id?: string;
  /** A runner whose last heart-beat is older than this is not counted in the capacity of synchronous runs. */
  runnerFreshSeconds?: number;
  /** The clock's now: created_at, the month billed and the rolling window all derive from it. */
  now: Date;
}

export const REJECTION_REASONS = [
  'monthly_limit',
  'key_monthly_limit',
  'rate_limited',
  'too_many_pending',
  'too_many_tests',
  /** Synchronous and WebSocket runs only: every one of the account's run slots is taken. */
  'too_many_running',
  /** Synchronous and WebSocket runs only: every runner slot of the deployment is taken. */
  'capacity',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export type Admission =
  | { admitted: true; id: string; units: number; month: string; figures?: RateFigures }
  | { admitted: false; reason: RejectionReason; message: string; retryAfterSeconds: number; figures?: RateFigures };

/** Seconds to wait when the pending limit is hit: jobs usually finish within a run's timeout. */
const PENDING_RETRY_SECONDS = 5;
/** Seconds to wait when a synchronous run finds no free slot. */
const BUSY_RETRY_SECONDS = 2;

/** Modes whose caller waits for the result: refused rather than queued when no slot is free. */
export const WAITING_MODES: readonly SubmissionMode[] = ['sync', 'ws', 'piston'];

/** Claim order (lower first): interactive runs go ahead of queued asynchronous ones. */
export const MODE_PRIORITY: Record<SubmissionMode, number> = { sync: -10, ws: -10, piston: -10, judge0: 0, async: 0 };

/** Serialises the capacity check of synchronous admissions across API processes; taken after the account lock. */
const SYNC_CAPACITY_LOCK = 7_316_002;

interface Snapshot {
  monthly_limit: number;
  per_minute: number;
  pending_limit: number;
  tests_per_request: number;
  pending: number;
  last_minute: number;
  oldest_in_window: Date | null;
  used: number;
  key_used: number;
  key_limit: number | null;
}

export async function admitSubmission(db: Db, req: AdmissionRequest): Promise<Admission> {
  const units = req.tests ? req.tests.length : 1;
  const month = monthOf(req.now);
  const windowStart = new Date(req.now.getTime() - RATE_WINDOW_MS);
  // A deadlock with a queue transition that moves the same counters aborts the whole
  // transaction, which then changed nothing: it is retried.
  return retryOnConflict(() => db.transaction().execute(async (trx) => {
    // The lock that serialises every admission of this account, across processes, and
    // the counts, in one call (migration 0004). Under READ COMMITTED the counts must be
    // read by a statement that starts after the lock was granted, so that its snapshot
    // sees every admission committed before it: the function locks, then counts in a
    // statement of its own. The rolling window has no upper bound, so API hosts whose
    // clocks differ slightly never overlook each other's submissions.
    const { rows } = await sql<Snapshot>`
      SELECT * FROM runbox_admission_snapshot(${req.accountId}, ${req.keyId}, ${month}, ${windowStart})
    `.execute(trx);
    const s = rows[0];
    if (!s) throw new Error(`account ${req.accountId} does not exist`);

    // The counts as this admission leaves them, for the answer's rate-limit headers:
    // exact, since they were read under the account's lock.
    const figures = (added: number): RateFigures => ({
      perMinute: s.per_minute,
      lastMinute: s.last_minute + (added > 0 ? 1 : 0),
      oldestInWindow: s.oldest_in_window ? new Date(s.oldest_in_window) : added > 0 ? req.now : null,
      monthlyLimit: s.monthly_limit,
      used: s.used + added,
      keyLimit: req.keyId === null ? null : s.key_limit,
      keyUsed: s.key_used + (req.keyId === null ? 0 : added),
    });
    const reject = (reason: RejectionReason, message: string, retryAfterSeconds: number): Admission => ({
      admitted: false,
      reason,
      message,
      retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
      figures: figures(0),
    });
    const toNextMonth = (nextMonthStart(req.now).getTime() - req.now.getTime()) / 1000;

    if (units > s.tests_per_request) {
      return reject('too_many_tests', `at most ${s.tests_per_request} tests per request on this plan, got ${units}`, 0);
    }
    if (s.used + units > s.monthly_limit) {
      return reject(
        'monthly_limit',
        `the account's monthly allowance of ${s.monthly_limit} submissions is used up (${s.used} this month); it resets at ${nextMonthStart(req.now).toISOString()}`,
        toNextMonth,
      );
    }
    if (s.key_limit !== null && s.key_used + units > s.key_limit) {
      return reject(
        'key_monthly_limit',
        `this key's own monthly limit of ${s.key_limit} submissions is used up (${s.key_used} this month); other keys keep working`,
        toNextMonth,
      );
    }
    // Every stored submission counts toward the rolling minute, refunded or not: the
    // rate limits requests, whatever became of them.
    if (s.last_minute + 1 > s.per_minute) {
      // The window frees a slot when its oldest submission is 60 s old.
      const oldest = s.oldest_in_window ? new Date(s.oldest_in_window).getTime() : req.now.getTime();
      return reject(
        'rate_limited',
        `at most ${s.per_minute} submissions per rolling minute per account`,
        (oldest + RATE_WINDOW_MS - req.now.getTime()) / 1000,
      );
    }
    if (s.pending + 1 > s.pending_limit) {
      return reject(
        'too_many_pending',
        `at most ${s.pending_limit} submissions per account may be queued or running at once`,
        PENDING_RETRY_SECONDS,
      );
    }

    // Interactive runs (synchronous, Piston and WebSocket) are refused rather than left waiting.
    if (req.mode !== undefined && WAITING_MODES.includes(req.mode)) {
      const busy = await syncBusy(trx, req.accountId, req.runnerFreshSeconds ?? 60);
      if (busy) return reject(busy.reason, busy.message, BUSY_RETRY_SECONDS);
    }

    // The job row, both usage counters and the runners' wake-up in ONE statement: each
    // round trip inside this account-locked transaction costs the database a parse and
    // a plan, and that bounds how many acknowledgements per second an API host gives.
    // Data-modifying CTEs always run; `woken` is read so that its SELECT runs too. The
    // notification is delivered to listening runners only when this transaction commits.
    const { rows: insertedRows } = await sql<{ id: string }>`
      WITH job AS (
        INSERT INTO submissions (id, priority, account_id, key_id, compiler, code, input, tests, extra_params, run_options, callback, compat,
                                 mode, units, month, max_attempts, created_at)
        VALUES (coalesce(${req.id ?? null}::uuid, gen_random_uuid()), ${MODE_PRIORITY[req.mode ?? 'async']}, ${req.accountId}, ${req.keyId},
                ${req.compiler}, ${req.code}, ${req.input}, ${req.tests ? JSON.stringify(req.tests) : null}::jsonb,
                ${req.extraParams ? (req.extraParamsJson ?? JSON.stringify(req.extraParams)) : null}::json,
                ${req.runOptions ? JSON.stringify(req.runOptions) : null}::jsonb, ${req.callback ? JSON.stringify(req.callback) : null}::jsonb,
                ${req.compat ? JSON.stringify(req.compat) : null}::jsonb, ${req.mode ?? 'async'}, ${units}, ${month},
                ${req.maxAttempts}, ${req.now})
        RETURNING id
      ),
      account_count AS (
        INSERT INTO account_usage (account_id, month, submissions) VALUES (${req.accountId}, ${month}, ${units})
        ON CONFLICT (account_id, month) DO UPDATE SET submissions = account_usage.submissions + excluded.submissions
      ),
      key_count AS (
        INSERT INTO key_usage (key_id, month, submissions)
        SELECT k, ${month}::text, ${units}::int FROM (SELECT ${req.keyId}::bigint AS k) AS given WHERE k IS NOT NULL
        ON CONFLICT (key_id, month) DO UPDATE SET submissions = key_usage.submissions + excluded.submissions
      ),
      woken AS (SELECT pg_notify('runbox_jobs', job.id::text) FROM job)
      SELECT job.id, (SELECT count(*) FROM woken) AS notified FROM job
    `.execute(trx);
    const inserted = insertedRows[0]!;
    // Usage emails at 80% and 100%, written with the usage that reaches them.
    await enqueueUsageEmails(trx, {
      accountId: req.accountId,
      keyId: req.keyId,
      month,
      before: s.used,
      after: s.used + units,
      limit: s.monthly_limit,
      keyBefore: s.key_used,
      keyAfter: s.key_used + units,
      keyLimit: s.key_limit,
    });
    return { admitted: true, id: inserted.id, units, month, figures: figures(units) };
  }));
}

/**
 * Whether a synchronous or WebSocket run would have to wait (it is refused instead; spec 4.4).
 * Account: a synchronous job does not queue behind the account's asynchronous jobs
 * (it goes first), but it does behind the account's interactive jobs still queued:
 * those take the next free slots. So the account is busy when its running jobs plus
 * its queued interactive jobs fill its runs-at-once limit. Read under the account
 * lock, which every admission of the account takes, and after it, since the queue
 * moves running_now on the same row: exact under concurrency.
 * Server: busy when the jobs running anywhere plus the synchronous jobs queued fill
 * the slots of the runners heart-beating now; the advisory lock makes two accounts'
 * synchronous admissions take turns here, so they cannot both take the last slot.
 */
async function syncBusy(
  trx: Transaction<Database>,
  accountId: string,
  freshSeconds: number,
): Promise<{ reason: 'too_many_running' | 'capacity'; message: string } | null> {
  const { rows: acct } = await sql<{ running_now: number; running_limit: number; queued_interactive: number }>`
    SELECT a.running_now, coalesce(a.running, p.running) AS running_limit,
           (SELECT count(*) FROM submissions s
             WHERE s.account_id = a.id AND s.state = 'queued' AND s.mode IN ('sync', 'ws', 'piston'))::int AS queued_interactive
      FROM accounts a JOIN plans p ON p.name = a.plan
     WHERE a.id = ${accountId}
  `.execute(trx);
  const a = acct[0]!;
  if (a.running_now + a.queued_interactive >= a.running_limit) {
    return {
      reason: 'too_many_running',
      message: `all ${a.running_limit} of the account's run slots are busy; a synchronous run does not wait for one`,
    };
  }
  await sql`SELECT pg_advisory_xact_lock(${SYNC_CAPACITY_LOCK})`.execute(trx);
  const { rows: server } = await sql<{ capacity: number; busy: number }>`
    SELECT coalesce((SELECT sum(slots) FROM runners
                      WHERE stopped_at IS NULL AND last_seen > now() - make_interval(secs => ${freshSeconds})), 0)::int AS capacity,
           (SELECT count(*) FROM submissions
             WHERE state = 'running' OR (state = 'queued' AND mode = ANY(${WAITING_MODES as SubmissionMode[]})))::int AS busy
  `.execute(trx);
  const c = server[0]!;
  if (c.busy >= c.capacity) {
    return { reason: 'capacity', message: `the service is at capacity (${c.capacity} run slots, all busy); try again shortly` };
  }
  return null;
}
