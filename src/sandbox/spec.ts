import { RUN_LIMITS } from '../limits.js';
import type { OmittedReason } from './archive.js';

// The one sandbox spec that every launcher (nsjail, bubblewrap) implements. The runner
// describes a stage (compile, or one run) with it; a launcher turns it into argv.

/** Paths inside the sandbox. Images are built with every one of them present, because
 *  a launcher cannot create a mount point on a read-only root. */
export const SANDBOX_LAYOUT = {
  /** Writable tmpfs working directory (RUN_LIMITS.workspaceBytes). */
  workspace: '/box',
  /** Writable tmpfs (RUN_LIMITS.tmpBytes). */
  tmp: '/tmp',
  /** Read-only bind of the runner's native helpers (init, seccomp filter). */
  helpers: '/.runbox',
  home: '/box',
} as const;

/** Mount points an image must contain. */
export const IMAGE_MOUNT_POINTS = [SANDBOX_LAYOUT.workspace, SANDBOX_LAYOUT.tmp, SANDBOX_LAYOUT.helpers, '/proc', '/dev', '/sys'] as const;

/** The environment every program gets; nothing of the runner's own environment passes. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: SANDBOX_LAYOUT.home,
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  TMPDIR: SANDBOX_LAYOUT.tmp,
  USER: 'runner',
  LOGNAME: 'runner',
  /** Launchers set it when they change directory; stated here so that both agree. */
  PWD: SANDBOX_LAYOUT.workspace,
};

// Numbers widen (a stage may run under lower limits than RUN_LIMITS); flags keep their literal.
export type SandboxLimits = { -readonly [K in keyof typeof RUN_LIMITS]: (typeof RUN_LIMITS)[K] extends number ? number : (typeof RUN_LIMITS)[K] };

/** A file placed in the workspace before the program starts, or brought back after it. */
export interface StageFile {
  /** A relative path in the workspace (its directories are made): no dot or dot-dot segments. */
  name: string;
  mode: number;
  content: Buffer;
}

export interface SandboxSpec {
  /** Absolute path of the image's read-only root. */
  rootfs: string;
  argv: string[];
  /** Added to BASE_ENV. */
  env?: Record<string, string>;
  stdin?: Buffer | string;
  /** The program's stdin as this host file (absolute; root's, mode 0644, in a directory
   *  only root can enter: a cached test's input, DataCache.file), opened read-only and
   *  given to the program itself: its bytes cross no process. Instead of `stdin`; not
   *  with `stdinFeed` or `link`. A sandbox that is not pooled reads it and passes its
   *  bytes as `stdin`. */
  stdinFile?: string;
  /** Placed in the workspace before the program starts. */
  files?: StageFile[];
  /** Directories made in the workspace (empty, with their parents) before the files. */
  dirs?: string[];
  /** Workspace paths to bring back when the program ends (a compile stage's output, a
   *  run's /box/out): a file, or a directory ending in / for every regular file below it
   *  (./ the whole workspace), in order of their paths while within the bounds. */
  collect?: string[];
  /** Lower bounds than limits.collectBytes and collectFiles for what comes back; the rest is listed in `omitted`. */
  collectBounds?: { bytes: number; files: number };
  /** Defaults to RUN_LIMITS. */
  limits?: Partial<SandboxLimits>;
  /** Runner slot: the program runs as uid/gid RUNBOX_SANDBOX_UID_BASE + slot. */
  slot: number;
  /** A second sandbox of the slot, beside its own (1: an interactive test's interactor,
   *  which runs at the same time as the program). Same uid, its own job cgroup, its own
   *  pooled sandbox. Default 0. */
  lane?: 0 | 1;
  /** Joins this stage's stdin and stdout to another stage's (StageLink): an interactive
   *  test's program and its interactor, each run in its own lane. `stdin` is not written. */
  link?: StageLinkSide;
  /** Called as output arrives (WebSocket streaming); chunks are within the kept 64 KB per stream. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /** A judged run: its whole stdout is kept for the comparison (outcome.wholeStdout), up to
   *  the flood limit, which may be raised past the service's for a test whose answer is
   *  larger (judgedFloodBytes). stdout and stderr in the outcome stay cut at the kept bytes. */
  judged?: { floodBytes: number };
  /** Aborts the run (client gone, runner shutting down): reported as internal_error. */
  signal?: AbortSignal;
  /** Input while the program runs (an interactive run): stdin stays open after `stdin`
   *  is written, takes each chunk the feed writes, and closes when the feed ends it (or
   *  with the stage). The program's stdin is still a pipe, never a terminal. */
  stdinFeed?: StdinFeed;
}

/** One side of two stages joined by their stdio (src/sandbox/link.ts). */
export interface StageLinkSide {
  /** The stage has been sent: its process, to be joined with the other side's. */
  started(stage: { linkWith(other: unknown): void; endStdin(): void }): void;
  /** The stage is over (or never started): the other side's stdin ends. */
  ended(): void;
}

/** A source of input for a running program. */
export interface StdinFeed {
  /** Called once the stage has started: `write` passes more input, `end` closes stdin.
   *  Returns a function the sandbox calls when the stage is over (no more calls after it). */
  attach(write: (chunk: Buffer) => void, end: () => void): () => void;
}

export type SandboxStatus = 'exited' | 'signaled' | 'timeout' | 'memory_limit' | 'output_limit' | 'process_limit' | 'internal_error';

export interface SandboxOutcome {
  /** How the stage ended; a verdict for a forced stop, never inferred from the exit code alone. */
  status: SandboxStatus;
  /** The program's exit code (forced stops: the reported code, e.g. 137, 153, 71). */
  exitCode: number | null;
  signal: number | null;
  stdout: Buffer;
  stderr: Buffer;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** Bytes seen on both streams, kept or not. */
  outputBytes: number;
  cpuMs: number | null;
  wallMs: number;
  /** Peak memory of the job cgroup; null when unavailable. */
  memoryPeakBytes: number | null;
  /** When the program ended, CLOCK_MONOTONIC nanoseconds (process.hrtime's clock): as its
   *  runbox-init reaped it; for a forced stop, when the stop began (its init may die with
   *  it); else as its end was reported. Of two linked stages, the one that ended first
   *  has the lower figure: each stamp comes before the program's output closes. */
  endedAtNs: bigint;
  /** Files named in spec.collect that were found (regular files only). */
  collected: StageFile[];
  /** A judged run's whole stdout (spec.judged). */
  wholeStdout?: Buffer;
  /** Files to collect that were left out, with their sizes: past the bounds (`limits`),
   *  or named with bytes that are not UTF-8 (`name`; the name escaped, `\xff`). */
  omitted: { name: string; size: number; reason: OmittedReason }[];
  /** Files to collect after those in `collected` and `omitted` were lost (the stage
   *  stream was cut or malformed after the program's end): why. */
  collectLost?: string;
  /** A timeout's limit: the stage's CPU time (the CPU watchdog, the reading at its end, or
   *  the CPU-time rlimit) or its wall-clock timeout. */
  limitExceeded?: 'cpu' | 'wall';
  /** Launcher or runner diagnostics on internal_error; never shown to users verbatim. */
  diagnostic?: string;
}

export interface Sandbox {
  /** Which launcher this is ('nsjail' or 'bwrap'). */
  readonly launcher: string;
  /** Whether its sandboxes are pooled: each stays and runs stage after stage, each stage
   *  in namespaces and a cgroup of its own (native/init/pool.c). */
  readonly pooled?: boolean;
  run(spec: SandboxSpec): Promise<SandboxOutcome>;
  /** Releases what the sandbox keeps ready between runs (each slot's next job cgroup and
   *  its waiting sandbox). Runs still work afterwards. Optional for stand-ins in tests. */
  close?(): Promise<void>;
}
