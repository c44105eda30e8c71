// Every limit of the service, declared once. The sandbox, the API's validators,
// GET /api/limits/, the table in docs/limits.md and the tests all read from here, so a limit
// changes in one place. Units are part of each name.

const KiB = 1024;
const MiB = 1024 * KiB;

/** Per-run limits, the same on every plan: paid plans never raise these. */
export const RUN_LIMITS = {
  /** Memory of the whole run, tmpfs pages included; no swap. */
  memoryBytes: 512 * MiB,
  /** CPU quota, in cores. */
  cpuCores: 2,
  /** Wall-clock limit of one stage (compile or run), enforced by the runner's timer. */
  timeoutMs: 30_000,
  /** Per-process CPU-time rlimit: a backstop behind the wall timer (2 cores x 30 s + slack). */
  cpuTimeRlimitSeconds: 65,
  /** Processes at once (threads are not processes). One more stops the run. */
  maxProcesses: 16,
  /** Tasks (threads included) at once: the hard cap the kernel enforces via the pids controller. */
  maxTasks: 256,
  /** Writable working directory (tmpfs, counted in memoryBytes). */
  workspaceBytes: 256 * MiB,
  /** Writable /tmp (tmpfs, counted in memoryBytes). */
  tmpBytes: 128 * MiB,
  /** Writable /dev/shm (POSIX shared memory, tmpfs counted in memoryBytes); the rest of
   *  /dev is read-only. */
  shmBytes: 64 * MiB,
  /** Largest single file a program may write (rlimit). */
  fileSizeBytes: 256 * MiB,
  /** Open files per process (rlimit). */
  openFiles: 256,
  /** Pseudo-terminals open at once in the sandbox's own devpts: each counts toward the
   *  host's kernel.pty.max, which one run must not exhaust. */
  terminals: 16,
  /** Output kept per stream; the rest is counted and dropped. */
  outputKeepBytes: 64 * KiB,
  /** Output across both streams past which the run is stopped. */
  outputFloodBytes: 8 * MiB,
  /** Files a stage may bring back (a compile stage's output), all together. */
  collectBytes: 64 * MiB,
  /** Files a stage may bring back, in number (a compiler's class files, a build directory). */
  collectFiles: 10_000,
  /** CPU time of one stage, all its processes together: the two cores for the whole timeout,
   *  so never reached unless a request lowers it (its limits.time); then the stage is a
   *  `timeout` past it. */
  cpuTimeMs: 60_000,
  /** How often the runner samples the job's process count. */
  processPollMs: 25,
  network: false,
} as const;

/**
 * What a job cgroup allows beyond the program's own limits, for the sandbox's own
 * processes (the launcher, runbox-init) and what the kernel keeps for them. The program's
 * cgroup (a pooled stage's, or the job's `program`) is held to memoryBytes itself, so an
 * OOM kill lands on the program and never on the sandbox around it: memory no process
 * maps (socket buffers, kernel objects) would otherwise make the largest task of the job,
 * the launcher, the OOM killer's choice.
 */
export const SANDBOX_OVERHEAD = {
  memoryBytes: 32 * MiB,
  /** A pooled stage that leaves more than this charged at its end (page cache, negative
   *  dentries) has it reclaimed then, on the runner's time, before its cgroup goes and
   *  the charges move to the job, where the next stage (another account's) would pay for
   *  their reclaim in its own CPU time. Most stages leave a megabyte or two, and a
   *  reclaim costs 0.2-4 ms even then. */
  drainAboveBytes: 8 * MiB,
  /** A pooled sandbox is reused only while its job, once a stage's charges have been
   *  reclaimed, holds at most this much more than before its first stage: stages' small
   *  leftovers add up, and what cannot be reclaimed would be paid for by a later stage. */
  settledSlackBytes: 16 * MiB,
} as const;

/** The lowest per-stage limits a request may ask for (the compatible routes accept lower
 *  timeouts and memory than RUN_LIMITS; below these a runtime cannot even start). */
export const STAGE_LIMIT_FLOORS = {
  timeoutMs: 100,
  memoryBytes: 32 * MiB,
  cpuTimeMs: 100,
} as const;

/** A requested per-stage limit, clamped to [floor, RUN_LIMITS]: lowered or left, never raised above the service's. */
export function clampStageLimit(kind: keyof typeof STAGE_LIMIT_FLOORS, requested: number): number {
  return Math.max(STAGE_LIMIT_FLOORS[kind], Math.min(RUN_LIMITS[kind], Math.floor(requested)));
}

/** Request-size limits: code, input, extra_params and the body. */
export const REQUEST_LIMITS = {
  codeMaxBytes: 100_000,
  inputMaxBytes: 100_000,
  extraParamsMaxBytes: 4 * KiB,
  /** Whole request body: room for code and a Free plan's 10 tests of full-size input,
   *  with JSON escaping; a 5 MB body is refused. */
  bodyMaxBytes: 4 * MiB,
  /** Deepest JSON nesting accepted in a body or a WebSocket message (extra_params is the
   *  only nested field), counted before anything parses or walks it. */
  jsonMaxDepth: 16,
} as const;

/** What a program may be made of, beyond `code` (the request's files, main, args and compiler options). */
export const PROGRAM_LIMITS = {
  /** Files of one program, the main one included. */
  filesMax: 100,
  /** Their decoded bytes together. */
  filesMaxBytes: 1_000_000,
  /** A file's name: a relative path, UTF-8 bytes. */
  fileNameMaxBytes: 255,
  /** Command-line arguments of the run stage. */
  argsMax: 64,
  argMaxBytes: 4096,
  /** Options added to the compile stage, each checked against the recipe's allowed forms. */
  compilerOptionsMax: 32,
  compilerOptionMaxBytes: 256,
} as const;

/** Files a run brings back from /box/out (return_files): the first ones by name within both bounds. */
export const RETURN_FILES_LIMITS = {
  filesMax: 16,
  bytesMax: 1 * MiB,
  /** Files past the bounds listed by name and size in files_dropped. */
  droppedListedMax: 100,
} as const;
/** Judged runs: comparisons, checker programs and interactors. */
export const JUDGE_LIMITS = {
  /** A checker's or interactor's message kept in a test's result. */
  checkerMessageMaxBytes: 4 * KiB,
  /** Arguments a checker or validator is given after its own (Kattis' validator flags), and the bytes of one. */
  validatorArgsMax: 64,
  validatorArgMaxBytes: 256,
} as const;

/**
 * The output flood limit of a judged test: the service's, or twice the answer's size when
 * that is more (a 16 MB answer needs room for a 16 MB output, and a little more for
 * whitespace a comparison forgives). The whole stdout up to it is kept for the comparison.
 */
export function judgedFloodBytes(answerBytes: number): number {
  return Math.max(RUN_LIMITS.outputFloodBytes, 2 * answerBytes);
}

/** Stored problems (POST /api/v2/problems): their tests and packages. */
export const PROBLEM_LIMITS = {
  /** One test's input or expected output. */
  testFileMaxBytes: 16 * MiB,
  /** Tests of one problem (a run of it is bounded by the plan's tests per request too). */
  testsMax: 1000,
  /** A problem as sent: its JSON body, or its zip package. */
  uploadMaxBytes: 64 * MiB,
  /** Entries of a zip package, directories included. */
  zipEntriesMax: 10_000,
  /** A problem's name, and a test's. */
  nameMaxBytes: 200,
} as const;

/** Exit codes and signals that the service reports for forced stops (published: 153/25 for output, 71 for processes). */
export const VERDICT_CODES = {
  outputLimitExitCode: 153,
  outputLimitSignal: 25,
  processLimitExitCode: 71,
  /** Timeouts and OOM kills report SIGKILL and 128 + 9. */
  killedExitCode: 137,
  killedSignal: 9,
} as const;

/** Per-account plan figures. Paid plans raise these, never RUN_LIMITS. */
export interface PlanLimits {
  monthlyLimit: number;
  perMinute: number;
  pending: number;
  running: number;
  testsPerRequest: number;
  /** Most sandbox time one request may ask for: its compile stage's timeout plus tests x
   *  its run stage's timeout (requestSandboxMs), so one request cannot hold a runner slot
   *  for tests x 30 s. */
  sandboxSecondsPerRequest: number;
  /** Test data the account's stored problems may keep, each distinct file counted once. */
  problemStorageBytes: number;
}

export const FREE_PLAN_NAME = 'free';

export const FREE_PLAN: PlanLimits = {
  monthlyLimit: 100_000,
  perMinute: 30,
  pending: 8,
  running: 2,
  testsPerRequest: 10,
  /** A compile and the plan's 10 tests at the 30 s timeout. */
  sandboxSecondsPerRequest: 330,
  problemStorageBytes: 64 * MiB,
};

/** The highest monthly allowance any plan may have (4,000,000 runs, the public contract's). */
export const MAX_MONTHLY_LIMIT = 4_000_000;

/** The rolling window of the per-minute submission rate. */
export const RATE_WINDOW_MS = 60_000;

/**
 * Milliseconds until a submission stamped at `oldestMs` leaves the rolling window, as
 * seen at `nowMs`. Never more than the window: a submission stamped after `now` (a
 * request that arrived a moment later, maybe on another API host, was admitted first)
 * has left it one window after the answer to this one.
 */
export function msUntilWindowFrees(oldestMs: number, nowMs: number): number {
  return Math.max(0, Math.min(RATE_WINDOW_MS, oldestMs + RATE_WINDOW_MS - nowMs));
}

/**
 * The most sandbox time a request asks for: the compile stage's timeout (when the
 * compiler has one) plus each test's run-stage timeout, with the stage timeouts it set
 * itself (clamped as the runner clamps them), else RUN_LIMITS.timeoutMs.
 */
export function requestSandboxMs(req: { compiles: boolean; tests: number; compileTimeoutMs?: number; runTimeoutMs?: number }): number {
  const stage = (given: number | undefined) => (given === undefined ? RUN_LIMITS.timeoutMs : clampStageLimit('timeoutMs', given));
  return (req.compiles ? stage(req.compileTimeoutMs) : 0) + Math.max(1, req.tests) * stage(req.runTimeoutMs);
}

/** Sandbox seconds per request that leave a plan's tests room: a compile and every test at
 *  the service's timeouts, never below the Free plan's (a new plan's default). */
export function sandboxSecondsFor(testsPerRequest: number): number {
  return Math.max(FREE_PLAN.sandboxSecondsPerRequest, requestSandboxMs({ compiles: true, tests: testsPerRequest }) / 1000);
}

/** WebSocket executions per connection per second. */
export const WEBSOCKET_RUNS_PER_SECOND = 1;

/**
 * Callback redeliveries one account may ask for in the portal within REDELIVERY_WINDOW_MS.
 * The operator's `runbox-admin callback redeliver` is not counted or limited.
 */
export const PORTAL_REDELIVERIES_PER_WINDOW = 20;
export const REDELIVERY_WINDOW_MS = 3600_000;
