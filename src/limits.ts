// Every limit of the service, declared once. The sandbox, the API's validators,
// GET /api/limits/, the table in docs/limits.md and the tests all read from here, so a limit
// changes in one place. Units are part of each name.

const KiB = 1024;
const MiB = 1024 * KiB;

/** How long an interactive run in a slot lent beyond its account's share (src/queue/claim.ts) may
 *  wait on its user's input, with nothing typed and nothing written, while another account's
 *  run waits for a slot; then it is stopped, saying why (src/runner/lent-slots.ts). */
export const LENT_SLOT_IDLE_MS = 5_000;

/** Per-run limits, the same on every plan: paid plans never raise these. */
export const RUN_LIMITS = {
  /** Memory of the whole run, tmpfs pages included; no swap. */
  memoryBytes: 512 * MiB,
  /** CPU quota, in cores. */
  cpuCores: 2,
  /** Wall-clock limit of one stage (compile or run), enforced by the runner's timer. */
  timeoutMs: 30_000,
  /** Per-process CPU-time rlimit: a backstop behind the wall timer (2 cores x 30 s + slack);
   *  a stage with a lowered CPU time gets cpuRlimitSeconds(cpuTimeMs) instead. */
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
   *  `timeout` (limit_exceeded "cpu") past it, stopped by the runner's CPU watchdog as the
   *  job cgroup's reading passes it. */
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

/**
 * How a run's two time limits go together, as Kattis and DOMjudge judge: the time limit
 * (a request's limits.time, a problem's time limit) is CPU time, all the run's processes
 * together, and beside it stands a wall-clock limit, so that a program that sleeps or
 * waits is stopped too. Unless the request sets wall_time, the wall limit is
 * wallPerCpu × time + wallExtraMs, at most the service's timeout: 1 s → 2.5 s, 2 s → 4 s,
 * 5 s → 8.5 s (a 10 s sleep under a 5 s limit is a timeout), 10 s → 16 s.
 */
export const TIME_LIMIT_RULE = {
  wallPerCpu: 1.5,
  wallExtraMs: 1000,
  /** The per-process CPU-time rlimit of a stage whose CPU time is lowered is a backstop
   *  past it, never the verdict: its soft limit is rlimitPerCpu × time + rlimitExtraSeconds,
   *  rounded up to whole seconds (SIGXCPU; SIGKILL a second later). The kernel's per-process
   *  count runs ahead of the cgroup's (a 1 s rlimit fires at 0.91-0.98 s of cgroup CPU),
   *  so an rlimit at the limit itself would stop a program before the limit is reached. */
  rlimitPerCpu: 1.5,
  rlimitExtraSeconds: 1,
  /** The CPU watchdog reads the stage's CPU time when the limit could first be reached
   *  (what is left of it spread over its cores), and again so until it is: at most this
   *  often. */
  cpuWatchMinMs: 10,
} as const;

/** The wall-clock limit of a run whose CPU time is `cpuMs` (TIME_LIMIT_RULE). */
export function wallTimeMsFor(cpuMs: number): number {
  return Math.min(RUN_LIMITS.timeoutMs, Math.round(TIME_LIMIT_RULE.wallPerCpu * cpuMs + TIME_LIMIT_RULE.wallExtraMs));
}

/** TIME_LIMIT_RULE in words, for /api/limits/ and the docs. */
export function wallTimeRuleText(): string {
  const r = TIME_LIMIT_RULE;
  return `the time limit (limits.time) is CPU time, all the run's processes together; unless wall_time is given, the wall-clock limit is ${r.wallPerCpu} × time + ${r.wallExtraMs / 1000} s, at most ${RUN_LIMITS.timeoutMs / 1000} s`;
}

/** The per-process CPU-time rlimit (seconds) of a stage whose CPU time is `cpuTimeMs`:
 *  RUN_LIMITS.cpuTimeRlimitSeconds unless lowered, and then a backstop past the limit. */
export function cpuRlimitSeconds(cpuTimeMs: number): { soft: number; hard: number } {
  if (cpuTimeMs >= RUN_LIMITS.cpuTimeMs) return { soft: RUN_LIMITS.cpuTimeRlimitSeconds, hard: RUN_LIMITS.cpuTimeRlimitSeconds };
  const soft = Math.ceil((TIME_LIMIT_RULE.rlimitPerCpu * cpuTimeMs) / 1000 + TIME_LIMIT_RULE.rlimitExtraSeconds);
  return { soft, hard: soft + 1 };
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
/** The Jobe-compatible route's file cache (PUT /jobe/index.php/restapi/files/{id}), per account. */
export const JOBE_FILE_CACHE = {
  /** One file: at most what a program's files may hold together. */
  fileMaxBytes: 1_000_000,
  /** Past either bound the least recently used files go, as from any cache. */
  filesPerAccount: 1000,
  bytesPerAccount: 64 * MiB,
  /** A file unused this long may go (Jobe keeps its cache "a few hours"). */
  keepHours: 24,
  /** A file id: Jobe's (letters and digits), at most this long. */
  idMaxLength: 128,
} as const;

/** A Jobe run finding no free slot waits for one this long, retrying, before it is Jobe's "server overload" (Jobe's jobe_wait_timeout). */
export const JOBE_SLOT_WAIT = { waitMs: 10_000, retryMs: 250 } as const;

/** Judged runs: comparisons, checker programs and interactors. */
export const JUDGE_LIMITS = {
  /** A checker's or interactor's message kept in a test's result. */
  checkerMessageMaxBytes: 4 * KiB,
  /** Arguments a checker or validator is given after its own (Kattis' validator flags), and the bytes of one. */
  validatorArgsMax: 64,
  validatorArgMaxBytes: 256,
  /** A multi-pass problem's validation_passes: each pass is a run of the program and of its validator. */
  validationPassesMax: 32,
} as const;

/** An interactor's wall-clock limit beyond its program's: the time it has to give its
 *  verdict once the program has ended (at the latest, at the program's own timeout). */
export const INTERACTOR_MARGIN_MS = 2_000;

/** An interactor's wall-clock limit: its program's run timeout (the service's unless the request lowered it) and the margin. */
export function interactorTimeoutMs(runTimeoutMs: number | undefined): number {
  return (runTimeoutMs ?? RUN_LIMITS.timeoutMs) + INTERACTOR_MARGIN_MS;
}

/**
 * The output flood limit of a judged test: the service's, or twice the answer's size when
 * that is more (a 16 MB answer needs room for a 16 MB output, and a little more for
 * whitespace a comparison forgives). The whole stdout up to it is kept for the comparison.
 */
export function judgedFloodBytes(answerBytes: number, statedBytes?: number): number {
  const flood = Math.max(RUN_LIMITS.outputFloodBytes, 2 * answerBytes);
  // A package's limits.output (at most the service's own) is its output's bound, exactly.
  return statedBytes !== undefined ? Math.min(flood, statedBytes) : flood;
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
  /** A package's YAML file (problem.yaml) and its .timelimit: real ones hold a few hundred
   *  bytes. Refused from the zip directory's size, before anything is inflated. */
  metadataFileMaxBytes: 8 * KiB,
  /** Deepest nesting of a package's YAML, counted on its tokens before it is parsed
   *  (src/problems/yaml.ts): flow collections ([ ], { }) open at once, plus block
   *  indentation levels, plus the block indicators (- ? :) before that point on the line.
   *  The parser recurses once per level, and a deep enough document exhausts the
   *  process's stack or memory past anything a try can catch. */
  yamlMaxDepth: 16,
  /** Problem writes (create, replace, delete; API and portal together) per account in a
   *  rolling minute (RATE_WINDOW_MS): each may inflate, hash and store 64 MiB. */
  writesPerMinute: 20,
} as const;

/** A stored problem's statement (Markdown, or a package's LaTeX source), as written in the portal's form or found in a package. */
export const PROBLEM_STATEMENT_LIMITS = { maxBytes: 256 * KiB } as const;

/** Lists of submissions as graders read them (src/grading: the portal's list, GET /api/v2/submissions/). */
export const GRADING_LIMITS = {
  /** Submissions on a page of the JSON answer (?limit), and its default. */
  pageMax: 1000,
  pageDefault: 100,
  /** Submissions a page of the portal shows. */
  portalPage: 50,
  /** Rows of one CSV or JSON-lines export: a longer one ends there (its last id, as ?after=, reads on). */
  exportMaxRows: 100_000,
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

/** What a request's sandbox time is made of (requestSandboxMs). */
export interface SandboxTimeRequest {
  /** Whether the program's compiler has a compile stage. */
  compiles: boolean;
  tests: number;
  compileTimeoutMs?: number;
  runTimeoutMs?: number;
  /** A checker program: its compile stage (when its compiler has one, at the service's
   *  timeout) and a stage after each test, at the run's timeout. */
  checker?: { compiles: boolean };
  /** An interactor: its compile stage and a stage beside each test's run, at
   *  interactorTimeoutMs. */
  interactor?: { compiles: boolean };
  /** A multi-pass problem's validation_passes: each test's stages run up to that many times. */
  passes?: number;
}

/** Each stage of a request at its timeout: `perTest` once for every test, `once` once. */
export function requestSandboxStages(req: SandboxTimeRequest): { name: string; ms: number; perTest: boolean }[] {
  const stage = (given: number | undefined) => (given === undefined ? RUN_LIMITS.timeoutMs : clampStageLimit('timeoutMs', given));
  const runMs = stage(req.runTimeoutMs);
  const stages = [
    ...(req.compiles ? [{ name: 'compile', ms: stage(req.compileTimeoutMs), perTest: false }] : []),
    { name: 'run', ms: runMs, perTest: true },
  ];
  // A checker's or interactor's compile stage runs at the service's timeout.
  if (req.checker?.compiles) stages.push({ name: 'checker compile', ms: RUN_LIMITS.timeoutMs, perTest: false });
  if (req.checker) stages.push({ name: 'check', ms: runMs, perTest: true });
  if (req.interactor?.compiles) stages.push({ name: 'interactor compile', ms: RUN_LIMITS.timeoutMs, perTest: false });
  if (req.interactor) stages.push({ name: 'interactor run', ms: interactorTimeoutMs(runMs), perTest: true });
  return stages;
}

/**
 * The most sandbox time a request asks for: the compile stage's timeout (when the
 * compiler has one) plus each test's run-stage timeout, with the stage timeouts it set
 * itself (clamped as the runner clamps them), else RUN_LIMITS.timeoutMs; and a judged
 * request's checker or interactor stages, their compile included.
 */
export function requestSandboxMs(req: SandboxTimeRequest): number {
  const tests = Math.max(1, req.tests) * Math.max(1, req.passes ?? 1);
  return requestSandboxStages(req).reduce((sum, st) => sum + (st.perTest ? tests * st.ms : st.ms), 0);
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

/** Sessions that keep their state between runs (POST /api/v2/sessions; src/sessions). The
 *  plan's own figures (sessions at once, longest lifetime) are columns of plans. */
export const SESSION_LIMITS = {
  /** An idle session (no run, no file read or written) is ended after this long unless it asks otherwise. */
  idleTimeoutDefaultSeconds: 600,
  idleTimeoutMaxSeconds: 3600,
  /** A session's lifetime when it asks for none (at most its plan's session_lifetime_seconds). */
  lifetimeDefaultSeconds: 3600,
  /** The workspace a run starts with and leaves behind: what is past these is not kept. */
  workspaceBytes: 8 * MiB,
  workspaceFiles: 256,
  /** One file written through the files route. */
  fileBytes: 4 * MiB,
  /** A run holds its session busy at most this long (a run whose API process died frees it then). */
  busyMs: 2 * RUN_LIMITS.timeoutMs + 60_000,
} as const;

/** A kernel session's cell (src/sessions/kernel.ts): what its result and kept state may hold. */
export const KERNEL_LIMITS = {
  /** The pickled values kept between cells; the largest past it are not kept (and named). */
  stateBytes: 4 * MiB,
  /** The repr of the last expression's value, in characters (longer ones end with ...). */
  valueChars: 64 * KiB,
  /** Figures a cell returns, and the PNG bytes of each. */
  imagesMax: 4,
  imageBytes: 512 * KiB,
  /** The result file the cell's interpreter writes: read only up to this size. */
  resultBytes: 4 * MiB,
  /** Names of values not kept, listed in the result. */
  notKeptMax: 100,
} as const;

/** Batches (POST /api/v2/batches; src/batches): many runs in one request, admitted as the account's limits free up. */
export const BATCH_LIMITS = {
  runsMax: 10_000,
  /** The JSON-lines body: every run's request. */
  bodyMaxBytes: 64 * MiB,
  /** How often an API process admits the next items of its batches. */
  feedIntervalMs: 100,
  /** An API process admits a batch's items alone for this long at a time (another takes over after it). */
  feedLeaseSeconds: 30,
  /** Items one feeding pass admits per batch at most. */
  feedItemsPerPass: 500,
  /** How often a results stream looks for more ended runs. */
  resultsPollMs: 200,
} as const;

/**
 * A stored problem's time limit when its package states none (Kattis packages derive it
 * from their accepted submissions): until a verification derives one
 * (POST /api/v2/problems/{id}/verify), its runs have this stated default, and the problem
 * says so (time_limit.source "default").
 */
export const PROBLEM_TIME_DEFAULTS = {
  /** CPU seconds of each run of a problem without a stated or derived limit. */
  defaultSeconds: 2,
  /** CPU seconds the accepted example submissions run at while a verification measures them
   *  (problemtools allows 300 s; here the service's own limit). */
  measureSeconds: RUN_LIMITS.timeoutMs / 1000,
} as const;

/** Verifying a package (its example submissions judged) and rejudging a problem's submissions. */
export const VERIFY_LIMITS = {
  /** Example submissions a package may keep. */
  submissionsMax: 200,
  /** Files of one example submission (a directory program). */
  submissionFilesMax: PROGRAM_LIMITS.filesMax,
  /** Earlier submissions one PUT ?rejudge=N may judge again (each run is billed and admitted as any). */
  rejudgeMax: 100,
  /** How often the API processes look at the checks going (admit runs, end phases). */
  advanceEveryMs: 1000,
} as const;
