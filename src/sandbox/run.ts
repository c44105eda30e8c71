import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { RUN_LIMITS, VERDICT_CODES } from '../limits.js';
import { decodeStageOut, encodeStageIn } from './archive.js';
import type { CgroupBackend, JobCgroup, JobCounters } from './cgroups/types.js';
import type { LaunchPlan, LaunchRequest } from './launchers/common.js';
import { OutputCounter } from './output.js';
import type { SandboxLimits, SandboxOutcome, SandboxSpec, SandboxStatus } from './spec.js';

// One stage in one sandbox, whatever the launcher: job cgroup, the shim, the streams,
// the watchdogs (wall timer, process count, output flood) and the verdict. The verdict
// comes from what the runner saw and the cgroup's counters, never from the exit code
// alone: a program may exit 137 or 153 by itself.

export interface RunContext {
  cgroups: CgroupBackend;
  /** native/build/runbox-shim */
  shimPath: string;
  /** native/build, mounted at /.runbox */
  helpersDir: string;
  launcherPath: string;
  plan: (req: LaunchRequest) => LaunchPlan;
  uidBase: number;
}

/** Launcher diagnostics kept for internal_error (never shown to users verbatim). */
const DIAGNOSTIC_BYTES = 4096;
/** How long a launcher may take to exit once its sandbox is gone. */
const LAUNCHER_GRACE_MS = 2000;
/** Headers around collected files on fd 4, on top of limits.collectBytes. */
const STAGE_OUT_SLACK_BYTES = 64 * 1024;

type Forced = Exclude<SandboxStatus, 'exited' | 'signaled'>;

function shimArgs(job: JobCgroup, plan: LaunchPlan, limits: SandboxLimits, uid: number): string[] {
  const args: string[] = [];
  for (const f of job.procsFiles) args.push('--cgroup', f);
  const cpu = limits.cpuTimeRlimitSeconds;
  args.push(
    '--rlimit', `cpu=${cpu}:${cpu}`,
    '--rlimit', `fsize=${limits.fileSizeBytes}:${limits.fileSizeBytes}`,
    '--rlimit', `nofile=${limits.openFiles}:${limits.openFiles}`,
    '--rlimit', 'core=0:0',
  );
  if (plan.dropPrivileges) args.push('--uid', String(uid), '--gid', String(uid));
  return [...args, '--', ...plan.argv];
}

export async function runStage(ctx: RunContext, spec: SandboxSpec): Promise<SandboxOutcome> {
  const limits: SandboxLimits = { ...RUN_LIMITS, ...spec.limits };
  if (!Number.isInteger(spec.slot) || spec.slot < 0) throw new Error(`bad slot ${spec.slot}`);
  const uid = ctx.uidBase + spec.slot;
  const plan = ctx.plan({ spec, limits, uid, gid: uid, helpersDir: ctx.helpersDir, launcherPath: ctx.launcherPath });
  const stageIn = encodeStageIn(spec.files ?? []);
  const stdin = typeof spec.stdin === 'string' ? Buffer.from(spec.stdin) : (spec.stdin ?? Buffer.alloc(0));

  const job = await ctx.cgroups.createJob(limits);
  try {
    return await supervise(ctx, spec, limits, plan, job, uid, stageIn, stdin);
  } finally {
    await job.killAll().catch(() => {});
    await job.remove();
  }
}

async function supervise(
  ctx: RunContext,
  spec: SandboxSpec,
  limits: SandboxLimits,
  plan: LaunchPlan,
  job: JobCgroup,
  uid: number,
  stageIn: Buffer,
  stdin: Buffer,
): Promise<SandboxOutcome> {
  const stdout = new OutputCounter(limits.outputKeepBytes);
  const stderr = new OutputCounter(limits.outputKeepBytes);
  const stageOut: Buffer[] = [];
  let stageOutBytes = 0;
  let stageOutOverflow = false;
  const diagnostics = new OutputCounter(DIAGNOSTIC_BYTES);
  let forced: Forced | null = null;
  let forcedWhy = '';
  let killing: Promise<void> = Promise.resolve();

  const started = performance.now();
  const child = spawn(ctx.shimPath, shimArgs(job, plan, limits, uid), {
    stdio: ['pipe', 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    env: {},
  });

  let exited = false;
  const launcherGone = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  const stop = (why: Forced, detail = '') => {
    if (forced) return;
    forced = why;
    forcedWhy = detail;
    // The launcher goes last, once its sandbox is gone (see killUntilEmpty); if it
    // still hangs on after that, it goes too.
    killing = job
      .killAll(child.pid)
      .then(() => Promise.race([launcherGone, new Promise((r) => setTimeout(r, LAUNCHER_GRACE_MS).unref())]))
      .then(() => (exited ? undefined : job.killAll()))
      .catch((e: Error) => {
        forcedWhy += ` (kill failed: ${e.message})`;
      });
  };

  const onStream = (name: 'stdout' | 'stderr', counter: OutputCounter) => (chunk: Buffer) => {
    const kept = counter.push(chunk);
    if (kept.length > 0 && spec.onOutput) spec.onOutput(name, kept);
    if (stdout.total + stderr.total > limits.outputFloodBytes) stop('output_limit');
  };
  child.stdout!.on('data', onStream('stdout', stdout));
  child.stderr!.on('data', onStream('stderr', stderr));
  const stdio = child.stdio as unknown as (Readable | Writable)[];
  const fd4 = stdio[4] as Readable;
  const fd5 = stdio[5] as Readable;
  fd4.on('data', (chunk: Buffer) => {
    // Keep reading past the bound so init never blocks, but keep nothing more.
    if (stageOutBytes + chunk.length > limits.collectBytes + STAGE_OUT_SLACK_BYTES) stageOutOverflow = true;
    if (stageOutOverflow) return;
    stageOut.push(chunk);
    stageOutBytes += chunk.length;
  });
  fd5.on('data', (chunk: Buffer) => diagnostics.push(chunk));
  for (const s of [child.stdout!, child.stderr!, fd4, fd5]) s.on('error', () => {});

  // Stage-in and stdin are written without waiting: a program that never reads must
  // not stall the runner. EPIPE just means it stopped reading.
  for (const [stream, data] of [
    [child.stdin!, stdin],
    [stdio[3] as Writable, stageIn],
  ] as const) {
    stream.on('error', () => {});
    stream.end(data);
  }

  const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
  let polling = false;
  const poller = setInterval(() => {
    if (polling || forced) return;
    polling = true;
    job
      .processIds()
      .then((pids) => {
        if (pids.length - plan.fixedProcesses > limits.maxProcesses) stop('process_limit');
      })
      .catch(() => {})
      .finally(() => (polling = false));
  }, limits.processPollMs);
  const onAbort = () => stop('internal_error', 'aborted');
  if (spec.signal?.aborted) onAbort();
  spec.signal?.addEventListener('abort', onAbort);

  let spawnError: Error | null = null;
  const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('error', (e) => {
      spawnError = e;
      resolve({ code: null, signal: null });
    });
    child.on('exit', (code, signal) => {
      exited = true;
      // Whatever the launcher left behind goes too, so every stream reaches its end.
      killing = killing.then(() => job.killAll()).catch(() => {});
      child.on('close', () => resolve({ code, signal }));
    });
  });
  const wallMs = performance.now() - started;
  clearTimeout(timer);
  clearInterval(poller);
  spec.signal?.removeEventListener('abort', onAbort);
  await killing;

  let counters: JobCounters = { oomKills: 0, taskLimitHits: 0, cpuNs: null, memoryPeakBytes: null };
  try {
    counters = await job.counters();
  } catch {
    // counters are informational
  }
  const out = decodeStageOut(Buffer.concat(stageOut), limits.collectBytes);

  const base = {
    stdout: stdout.bytes,
    stderr: stderr.bytes,
    stdoutTruncated: stdout.truncated,
    stderrTruncated: stderr.truncated,
    outputBytes: stdout.total + stderr.total,
    cpuMs: counters.cpuNs === null ? null : counters.cpuNs / 1e6,
    wallMs,
    memoryPeakBytes: counters.memoryPeakBytes,
    collected: [] as SandboxOutcome['collected'],
  };
  const verdict = (status: SandboxStatus, exitCode: number | null, signal: number | null, diagnostic?: string): SandboxOutcome =>
    diagnostic === undefined ? { ...base, status, exitCode, signal } : { ...base, status, exitCode, signal, diagnostic };

  const { killedExitCode, killedSignal } = VERDICT_CODES;
  switch (forced as Forced | null) {
    case 'output_limit':
      return verdict('output_limit', VERDICT_CODES.outputLimitExitCode, VERDICT_CODES.outputLimitSignal);
    case 'process_limit':
      return verdict('process_limit', VERDICT_CODES.processLimitExitCode, null);
    case 'timeout':
      return verdict('timeout', killedExitCode, killedSignal);
    case 'memory_limit':
      return verdict('memory_limit', killedExitCode, killedSignal);
    case 'internal_error':
      return verdict('internal_error', null, null, forcedWhy || 'stopped');
    default:
      break;
  }
  if (counters.oomKills > 0) return verdict('memory_limit', killedExitCode, killedSignal);
  if (spawnError) return verdict('internal_error', null, null, `cannot start the shim: ${(spawnError as Error).message}`);
  if (!out.end || out.error || stageOutOverflow) {
    const why = out.error ?? (stageOutOverflow ? 'stage-out stream too large' : 'no end record from runbox-init');
    const launcher = `launcher exit ${exit.code ?? exit.signal}`;
    const text = Buffer.concat([diagnostics.bytes, Buffer.from('\n'), stderr.bytes.subarray(0, DIAGNOSTIC_BYTES)]).toString('utf8');
    return verdict('internal_error', null, null, `${why}; ${launcher}; ${text.trim()}`);
  }
  base.collected = out.files;
  return out.end.kind === 'exited'
    ? verdict('exited', out.end.code, null)
    : verdict('signaled', 128 + out.end.signal, out.end.signal);
}
