import { RevokedKeyError } from '../accounts/errors.js';
import { compilerEntry } from '../compilers/catalogue.js';
import type { Db } from '../db/connect.js';
import type { CallbackTarget, RunOptions, SubmissionMode, TestCaseRow } from '../db/schema.js';
import { msUntilWindowFrees, RATE_WINDOW_MS, requestSandboxMs, requestSandboxStages, type SandboxTimeRequest } from '../limits.js';
import { syntaxChecked } from '../program/plan.js';
import { monthOf, nextMonthStart } from '../util/clock.js';
import { type AdmitRow, admissionBatcher } from './group-commit.js';
import { MODE_PRIORITY, WAITING_MODES } from './modes.js';
import type { RateFigures } from './usage.js';

// Admission: every per-account limit checked and the job row inserted in ONE
// transaction that holds the account row's lock (runbox_admit, migrations 0011 and 0013, called
// for a batch of admissions at once by ./group-commit.ts). Two API processes admitting
// for the same account therefore take turns, so the counts they read are exact and a
// limit can never be overshot. A rejected request writes nothing.

export interface AdmissionRequest {
  accountId: string;
  /** Null for calls without a key context. */
  keyId: string | null;
  compiler: string;
  code: string;
  input: string | null;
  /** Multi-test request: each test is billed as one submission. */
  tests: TestCaseRow[] | null;
  /** Submissions billed when not one per test of `tests` (a stored problem's tests). */
  units?: number;
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
  /** The operator's recipes directory (RUNBOX_RECIPES_DIR): whether the compiler has a compile stage. */
  recipesDir?: string;
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
  /** The request asks for more sandbox time (compile timeout + tests x run timeout, and a checker's or interactor's stages) than the plan allows. */
  'too_much_sandbox_time',
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

export { MODE_PRIORITY, WAITING_MODES } from './modes.js';

export async function admitSubmission(db: Db, req: AdmissionRequest): Promise<Admission> {
  const units = req.units ?? (req.tests ? req.tests.length : 1);
  const sandbox = sandboxTime(req, units);
  const month = monthOf(req.now);
  const mode = req.mode ?? 'async';
  // The rolling window has no upper bound, so API hosts whose clocks differ slightly
  // never overlook each other's submissions.
  const row = await admissionBatcher(db).admit({
    account: req.accountId,
    key: req.keyId,
    id: req.id ?? null,
    compiler: req.compiler,
    code: req.code,
    input: req.input,
    tests: req.tests,
    // As the client wrote it: stored as json text, so results echo it unchanged.
    extra: req.extraParams ? (req.extraParamsJson ?? JSON.stringify(req.extraParams)) : null,
    run_options: req.runOptions ?? null,
    callback: req.callback ?? null,
    compat: req.compat ?? null,
    mode,
    waiting: WAITING_MODES.includes(mode),
    priority: MODE_PRIORITY[mode],
    units,
    month,
    max_attempts: req.maxAttempts,
    created_at: req.now.toISOString(),
    window_start: new Date(req.now.getTime() - RATE_WINDOW_MS).toISOString(),
    fresh_seconds: req.runnerFreshSeconds ?? 60,
    sandbox_ms: sandbox.ms,
  });
  if (row.reason === 'no_account') throw new Error(`account ${req.accountId} does not exist`);
  // Revoked after the request was authenticated (or while another process still had the key cached).
  if (row.reason === 'revoked_key') throw new RevokedKeyError();
  if (row.id !== null) return { admitted: true, id: row.id, units, month, figures: rateFigures(row, req, units) };
  return { ...rejection(row, units, sandbox, req.now), figures: rateFigures(row, req, 0) };
}

interface SandboxTime {
  ms: number;
  /** How the figure is made up, for the refusal's message. */
  parts: string;
}

/** The most sandbox time the request asks for, with the stage timeouts it set (the
 *  compatible routes) or the service's, a judged request's checker or interactor too. */
function sandboxTime(req: AdmissionRequest, units: number): SandboxTime {
  const entry = compilerEntry(req.compiler, req.recipesDir);
  const compiles = (compiler: string) => compilerEntry(compiler, req.recipesDir)?.compile !== undefined;
  const judge = req.runOptions?.judge;
  const checker = judge?.checker.type === 'program' ? judge.checker : null;
  const time: SandboxTimeRequest = {
    // A judged run's syntax check is a compile stage too (src/program/plan.ts).
    compiles: entry !== undefined && (entry.compile !== undefined || syntaxChecked(entry, req.runOptions, req.mode)),
    tests: units,
    compileTimeoutMs: req.runOptions?.compile?.timeout_ms,
    runTimeoutMs: req.runOptions?.run?.timeout_ms,
    ...(checker ? { checker: { compiles: compiles(checker.compiler) } } : {}),
    ...(judge?.interactor ? { interactor: { compiles: compiles(judge.interactor.compiler) } } : {}),
  };
  // A multi-pass problem's tests each run up to validation_passes times (src/judge/multi-pass.ts).
  const passes = (judge?.interactor ?? checker)?.passes;
  if (passes !== undefined) time.passes = passes;
  const s = (x: number) => `${x / 1000} s`;
  const n = (what: string) => `${units} ${units === 1 ? what : `${what === 'run' ? 'test' : what}s`}${passes !== undefined ? ` × ${passes} passes` : ''}`;
  const parts = requestSandboxStages(time).map((st) => (st.perTest ? `${n(st.name)} × ${s(st.ms)}` : `${st.name} ${s(st.ms)}`));
  return { ms: requestSandboxMs(time), parts: parts.join(' + ') };
}

/**
 * The counts as this admission leaves them, for the answer's rate-limit headers: exact,
 * since runbox_admit read them under the account's lock.
 */
function rateFigures(row: AdmitRow, req: AdmissionRequest, added: number): RateFigures {
  return {
    perMinute: row.per_minute!,
    // Tests count toward the minute as toward the month.
    lastMinute: row.last_minute! + added,
    oldestInWindow: row.oldest_in_window ? new Date(row.oldest_in_window) : added > 0 ? req.now : null,
    monthlyLimit: row.monthly_limit!,
    used: row.used! + added,
    keyLimit: req.keyId === null ? null : row.key_limit,
    keyUsed: row.key_used! + (req.keyId === null ? 0 : added),
  };
}

/** Why runbox_admit refused, with the figures the message states. */
function rejection(row: AdmitRow, units: number, sandbox: SandboxTime, now: Date): Extract<Admission, { admitted: false }> {
  const reject = (reason: RejectionReason, message: string, retryAfterSeconds: number): Extract<Admission, { admitted: false }> => ({
    admitted: false,
    reason,
    message,
    retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)),
  });
  const toNextMonth = (nextMonthStart(now).getTime() - now.getTime()) / 1000;
  switch (row.reason) {
    case 'too_many_tests':
      // A request of more tests than the minute allows could never pass: the same refusal, saying why.
      return units > row.tests_per_request!
        ? reject('too_many_tests', `at most ${row.tests_per_request} tests per request on this plan, got ${units}`, 0)
        : reject('too_many_tests', `at most ${row.per_minute} tests per request: each test counts toward the ${row.per_minute} submissions per minute; got ${units}`, 0);
    case 'too_much_sandbox_time':
      return reject(
        'too_much_sandbox_time',
        `this request may use up to ${sandbox.ms / 1000} s of sandbox time (${sandbox.parts}); this plan allows ${row.sandbox_seconds} s per request${units > 1 ? ': send fewer tests' : ''}`,
        0,
      );
    case 'monthly_limit':
      return reject(
        'monthly_limit',
        `the account's monthly allowance of ${row.monthly_limit} submissions is used up (${row.used} this month); it resets at ${nextMonthStart(now).toISOString()}`,
        toNextMonth,
      );
    case 'key_monthly_limit':
      return reject(
        'key_monthly_limit',
        `this key's own monthly limit of ${row.key_limit} submissions is used up (${row.key_used} this month); other keys keep working`,
        toNextMonth,
      );
    case 'rate_limited': {
      // Every stored submission counts toward the rolling minute with each of its tests,
      // refunded or not: the rate limits requests, whatever became of them. The window
      // has room for this request when enough of its tests are 60 s old (window_frees_at).
      const frees = row.window_frees_at ?? row.oldest_in_window;
      const at = frees ? new Date(frees).getTime() : now.getTime();
      const left = Math.max(0, row.per_minute! - row.last_minute!);
      return reject(
        'rate_limited',
        units === 1
          ? `at most ${row.per_minute} submissions per rolling minute per account`
          : `at most ${row.per_minute} submissions per rolling minute per account, each test counting as one: this request has ${units} tests and ${left} are left in the minute`,
        msUntilWindowFrees(at, now.getTime()) / 1000,
      );
    }
    case 'too_many_pending':
      return reject(
        'too_many_pending',
        `at most ${row.pending_limit} submissions per account may be queued or running at once`,
        PENDING_RETRY_SECONDS,
      );
    // Waiting runs (WAITING_MODES) are refused rather than queued (spec 4.4): the
    // account's running jobs plus its queued waiting ones fill its runs-at-once limit,
    // or the jobs running anywhere plus the waiting ones queued fill the live runners' slots.
    case 'too_many_running':
      // `capacity` set: the account holds its share of the runners' slots while another account's run waits (the rest are kept for other accounts).
      return reject(
        'too_many_running',
        row.capacity !== null && row.capacity < row.running_limit!
          ? `the account's ${row.capacity} runs going are as many as the service's runners give one account while other accounts' runs wait (each runner keeps a slot for other accounts); a synchronous run does not wait for one`
          : `all ${row.running_limit} of the account's run slots are busy; a synchronous run does not wait for one`,
        BUSY_RETRY_SECONDS,
      );
    case 'capacity':
      return reject('capacity', `the service is at capacity (${row.capacity} run slots, all busy); try again shortly`, BUSY_RETRY_SECONDS);
    default:
      throw new Error(`unknown admission answer ${row.reason}`);
  }
}
