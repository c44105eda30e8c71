import { chownSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { constants } from 'node:os';
import { join } from 'node:path';
import { cpuRlimitSeconds, RUN_LIMITS, SANDBOX_OVERHEAD, TIME_LIMIT_RULE, VERDICT_CODES } from '../limits.js';
import { decodeStageOut, encodeStageIn, PATH_MAX_BYTES, WALK_MAX_ENTRIES } from './archive.js';
import { forkServer, STAGE_PIPES, type StageIo, type StageProcess, type StageStreams, type StartRequest } from './fork-server.js';
import type { CgroupBackend, JobCgroup, JobCounters, JobLimits, StageCgroup } from './cgroups/types.js';
import { readNumber } from './cgroups/v1.js';
import { stageProgram, type LaunchPlan, type LaunchRequest } from './launchers/common.js';
import { sandboxView } from './launchers/view.js';
import { slotCpus } from './cpus.js';
import { launchDir } from './launch-dir.js';
import type { SandboxLimits, SandboxOutcome, SandboxSpec, SandboxStatus } from './spec.js';

// One stage in one sandbox, whatever the launcher: job cgroup, the launcher, the streams,
// the watchdogs (wall timer, CPU time, process count, output flood) and the verdict. The verdict
// comes from what the runner saw and the cgroup's counters, never from the exit code
// alone: a program may exit 137 or 153 by itself.
//
// A stage starts in two steps. `prepare` creates the job cgroup and starts the launcher
// in it (the fork server's child joins it, sets rlimits and drops privileges first): the
// launcher builds the sandbox and runbox-init waits in it for the stage archive.
// `runStage` sends the archive (the program, its environment and files) and stdin. The
// launcher's start and set-up take milliseconds (new processes, namespaces, mounts), so
// a runner prepares a slot's next stage ahead of time (warm.ts) for the image and limits
// it expects; a stage that needs others is prepared afresh. Each sandbox runs one stage.

export interface RunContext {
  cgroups: CgroupBackend;
  /** native/build/runbox-forkserver, which starts the launchers (fork-server.ts) */
  forkServerPath: string;
  /** native/build, mounted at /.runbox */
  helpersDir: string;
  launcherPath: string;
  plan: (req: LaunchRequest) => LaunchPlan;
  uidBase: number;
  /** Pooled sandboxes (pooled.md in docs/internals): a sandbox stays and runs stage after
   *  stage, each in namespaces and a cgroup of its own. Where the cgroup back end cannot
   *  give a stage its own cgroup, each sandbox runs one stage. */
  pooled: boolean;
}

/** Launcher diagnostics kept for internal_error (never shown to users verbatim). */
const DIAGNOSTIC_BYTES = 4096;
/** How long a launcher may take to exit once its sandbox is gone. */
const LAUNCHER_GRACE_MS = 2000;
/** Headers around collected and omitted files on fd 4, on top of limits.collectBytes:
 *  one per file a directory walk may find (and the few named ones), each path at most
 *  PATH_MAX_BYTES long. */
const STAGE_OUT_SLACK_BYTES = (WALK_MAX_ENTRIES + 64) * (11 + PATH_MAX_BYTES);

type Forced = Exclude<SandboxStatus, 'exited' | 'signaled'>;

/** What a sandbox is built for: a stage fits a prepared one when all of it is the same. */
export interface LaunchKey {
  rootfs: string;
  /** Which directory `rootfs` named then (device and inode): an image is updated by
   *  switching a symlink, and a sandbox prepared before the switch holds the old tree. */
  rootfsId: string;
  limits: SandboxLimits;
  slot: number;
  /** Which of the slot's sandboxes (SandboxSpec.lane). */
  lane: number;
}

/** A job cgroup with a launcher in it, whose runbox-init waits for its stage. */
export interface Prepared {
  key: LaunchKey;
  job: JobCgroup;
  /** The launcher: pipes 0-2 the program's, 3 stage-in, 4 stage-out, 5 its log, then the
   *  program's cgroup.procs files (opened by the fork server, as root), which runbox-init joins. */
  child: StageProcess;
  plan: LaunchPlan;
  /** The launcher's config file (nsjail), removed with the stage. */
  configPath: string | undefined;
  /** Settles when the launcher has exited. */
  gone: Promise<void>;
  /** A pooled sandbox (runbox-init --pool): it runs stage after stage while it stays clean. */
  pooled: boolean;
  /** Stages it has run. */
  stages: number;
  /** The job's memory in use before its first stage (bytes; null: unknown). */
  baselineBytes: number | null;
}

export function jobLimits(limits: JobLimits): JobLimits {
  return { memoryBytes: limits.memoryBytes, cpuCores: limits.cpuCores, maxTasks: limits.maxTasks };
}

/** The launch key of a stage: its image, its limits (RUN_LIMITS where it sets none), its slot. */
export function launchKey(spec: Pick<SandboxSpec, 'rootfs' | 'limits' | 'slot' | 'lane'>): LaunchKey {
  return { rootfs: spec.rootfs, rootfsId: directoryId(spec.rootfs), limits: { ...RUN_LIMITS, ...spec.limits }, slot: spec.slot, lane: spec.lane ?? 0 };
}

function directoryId(path: string): string {
  try {
    const st = statSync(path);
    return `${st.dev}:${st.ino}`;
  } catch {
    return ''; // the launcher will say what is wrong with it
  }
}

/** Whether a sandbox built for `a` is the one a stage with key `b` needs. */
export const sameLaunchKey = (a: LaunchKey, b: LaunchKey) =>
  a.rootfs === b.rootfs && a.rootfsId === b.rootfsId && a.slot === b.slot && a.lane === b.lane &&
  (Object.keys(RUN_LIMITS) as (keyof SandboxLimits)[]).every((k) => a.limits[k] === b.limits[k]);

/** Makes the job cgroup and starts the launcher in it for `key`; its runbox-init then
 *  waits for the stage archive (runStage) or its end (discard). */
export async function prepare(ctx: RunContext, key: LaunchKey): Promise<Prepared> {
  if (!Number.isInteger(key.slot) || key.slot < 0) throw new Error(`bad slot ${key.slot}`);
  const { limits } = key;
  const uid = ctx.uidBase + key.slot;
  const job = await ctx.cgroups.createJob(jobLimits(limits), { pooled: ctx.pooled });
  const pooled = ctx.pooled && job.createStage !== undefined;
  let configPath: string | undefined;
  try {
    configPath = newConfigPath();
    const cpus = slotCpus(key.slot, limits.cpuCores);
    const plan = ctx.plan({
      spec: { rootfs: key.rootfs }, limits, uid, gid: uid, helpersDir: ctx.helpersDir, launcherPath: ctx.launcherPath, configPath,
      // A pooled sandbox's stages join cgroups of their own (passed with each stage).
      programCgroupFds: pooled ? [] : job.programProcsFiles.map((_, i) => STAGE_PIPES + i),
      cpus,
      pool: pooled,
      view: sandboxView(join(launchDir(), 'view'), limits.memoryBytes, cpus.length),
    });
    if (plan.configText === undefined) configPath = undefined;
    else {
      writeFileSync(configPath, plan.configText, { mode: 0o600 });
      // Read by the launcher itself: root's, or the slot's when it runs as the slot.
      if (plan.dropPrivileges) chownSync(configPath, uid, uid);
    }
    const child = await forkServer(ctx.forkServerPath).start({
      argv: plan.argv,
      join: job.procsFiles,
      files: pooled ? [] : job.programProcsFiles,
      rlimits: rlimits(limits),
      ...(plan.dropPrivileges ? { user: { uid, gid: uid } } : {}),
    }, pooled);
    const gone = child.exited ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return { key, job, child, plan, configPath, gone, pooled, stages: 0, baselineBytes: null };
  } catch (e) {
    removeConfig(configPath);
    await job.remove();
    throw e;
  }
}

/** Whether a prepared stage fits `key` and its launcher is still waiting. */
export function usable(p: Prepared, key: LaunchKey): boolean {
  return !p.child.exited && sameLaunchKey(p.key, key);
}

/** Calls a prepared stage off: runbox-init exits on an empty stage archive. */
export async function discard(p: Prepared): Promise<void> {
  // Referenced again, so that the process stays up until the launcher is gone.
  p.child.ref();
  p.child.discard();
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([p.gone, new Promise((r) => (timer = setTimeout(r, LAUNCHER_GRACE_MS)))]);
  clearTimeout(timer);
  removeConfig(p.configPath);
  await p.job.killAll();
  await p.job.remove();
}

function removeConfig(path: string | undefined): void {
  if (!path) return;
  try {
    unlinkSync(path);
  } catch {
    // not written
  }
}

function rlimits(limits: SandboxLimits): NonNullable<StartRequest['rlimits']> {
  // The CPU-time rlimit is a backstop well past a lowered CPU time (TIME_LIMIT_RULE): the
  // stage's own CPU time, all its processes together, stops it (the CPU watchdog) and
  // gives the verdict. An rlimit at the limit would fire first, the kernel's count
  // running ahead of the cgroup's.
  const cpu = limits.cpuTimeMs < RUN_LIMITS.cpuTimeMs ? cpuRlimitSeconds(limits.cpuTimeMs) : { soft: limits.cpuTimeRlimitSeconds, hard: limits.cpuTimeRlimitSeconds };
  return [
    { resource: 'cpu', soft: cpu.soft, hard: cpu.hard },
    { resource: 'fsize', soft: limits.fileSizeBytes, hard: limits.fileSizeBytes },
    { resource: 'nofile', soft: limits.openFiles, hard: limits.openFiles },
    { resource: 'core', soft: 0, hard: 0 },
  ];
}

// Launcher config files (nsjail's) live in this process's launch directory (launch-dir.ts),
// readable by root only, one file per run, removed when the run ends.
let configSeq = 0;
function newConfigPath(): string {
  return join(launchDir(), `run-${++configSeq}.cfg`);
}

/** Runs one stage, in `prepared` when it fits (same launch key, still waiting), else afresh.
 *  `onOver` is called once the stage's processes are gone, before its counters are read.
 *  A pooled sandbox that is still clean after the stage is handed to `keep` (for the
 *  slot's next stage) instead of being removed; with `ready`, it may be used once that
 *  settles true (what its stage left charged is being reclaimed) and goes if false. */
export async function runStage(
  ctx: RunContext,
  spec: SandboxSpec,
  prepared?: Prepared,
  key: LaunchKey = launchKey(spec),
  onOver?: () => void,
  keep?: (p: Prepared, ready?: Promise<boolean>) => void,
): Promise<SandboxOutcome> {
  const { limits } = key;
  let p = prepared;
  try {
    // Checked before anything starts: a bad argv, environment or name is the caller's error.
    const stageIn = encodeStageIn(spec.files ?? [], stageProgram(spec, limits), spec.dirs ?? []);
    // A linked stage's stdin is its partner's output, nothing else.
    let stdin = spec.link ? Buffer.alloc(0) : typeof spec.stdin === 'string' ? Buffer.from(spec.stdin) : (spec.stdin ?? Buffer.alloc(0));
    // A file as stdin goes to a pooled stage as the file itself (the fork server opens it).
    const stdinFile = spec.stdinFile !== undefined && !spec.link && !spec.stdinFeed ? spec.stdinFile : undefined;
    if (p && !usable(p, key)) {
      await discard(p).catch(() => {});
      p = undefined;
    }
    p ??= await prepare(ctx, key);
    if (!p.pooled) {
      if (stdinFile !== undefined) {
        try {
          stdin = await readFile(stdinFile);
        } catch (e) {
          // Nothing ran: the prepared launcher is called off (its init exits on an empty stage).
          const unused = p;
          p = undefined;
          await discard(unused).catch(() => {});
          throw e;
        }
      }
      return await supervise(spec, limits, launcherTarget(p), stageIn, stdin, onOver);
    }
    const { target, clean, cgroup } = enterStage(ctx, p);
    if (p.stages === 0) p.baselineBytes = readNumber(cgroup.settleFile);
    p.stages++;
    const outcome = await supervise(spec, limits, target, stageIn, stdin, undefined, stdinFile);
    const report = target.child.report;
    // Charges being reclaimed by the fork server: the cgroup is its until that has ended.
    if (report?.reclaim) void report.reclaim.then((r) => (r?.removed ? undefined : removeLater(cgroup)));
    else if (!report?.removed) removeLater(cgroup);
    // A stage that ended by itself or was stopped leaves its sandbox clean; one whose
    // runbox-init failed says nothing good of the sandbox, which goes. One whose job
    // kept much more memory than it started with goes too, once that is known.
    const failed = outcome.status === 'internal_error' && outcome.diagnostic !== 'aborted';
    if (keep && clean() && !failed && report && (report.reclaim || settled(p, report.settled))) {
      const sandbox = p;
      p.child.unref();
      keep(p, report.reclaim?.then((r) => r !== null && settled(sandbox, r.settled)));
      p = undefined;
    }
    onOver?.();
    return outcome;
  } finally {
    // Its partner's stdin ends with it, however it ended (or if it never started).
    spec.link?.ended();
    if (p?.pooled) {
      await discard(p).catch(() => {});
    } else if (p) {
      await p.job.killAll().catch(() => {});
      removeLater(p.job);
      removeConfig(p.configPath);
    }
  }
}

/** Whether the job of pooled sandbox `p`, once its last stage's charges were reclaimed,
 *  is back near what it held before its first stage (SANDBOX_OVERHEAD.settledSlackBytes). */
function settled(p: Prepared, text: string | undefined): boolean {
  const now = text === undefined || text.trim() === '' ? NaN : Number(text.trim());
  if (p.baselineBytes === null || !Number.isFinite(now)) return true; // nothing to compare: the counters are informational
  return now <= p.baselineBytes + SANDBOX_OVERHEAD.settledSlackBytes;
}

/** A stage in pooled sandbox `p`: its own cgroup and pipes, sent in one request. */
function enterStage(ctx: RunContext, p: Prepared): { target: StageTarget; clean: () => boolean; cgroup: StageCgroup } {
  const cgroup = p.job.createStage!();
  const oomKillsBefore = p.job.oomKills();
  const uid = ctx.uidBase + p.key.slot;
  const stage = forkServer(ctx.forkServerPath).stage(p.child, { uid, gid: uid }, cgroup);
  // The sandbox going (its init failed, or it was killed) ends the stage with it.
  let sandboxGone = p.child.exited;
  const onSandboxExit = () => {
    sandboxGone = true;
    stage.ended(null, 'SIGKILL');
  };
  p.child.once('exit', onSandboxExit);
  const done = new Promise<void>((resolve) => {
    if (stage.exited) resolve();
    else stage.once('exit', () => resolve());
  });
  void done.then(() => p.child.off('exit', onSandboxExit));
  let killedSandbox = false;
  const target: StageTarget = {
    child: stage,
    run: (io) => {
      if (sandboxGone) stage.ended(null, 'SIGKILL');
      return stage.run(io);
    },
    gone: done,
    // The stage's processes go; its init (PID 1 of the stage's PID namespace) takes the
    // rest with it. A stage that does not end then takes its whole sandbox with it.
    kill: () =>
      cgroup
        .killAll()
        .then(() => Promise.race([done, new Promise((r) => setTimeout(r, LAUNCHER_GRACE_MS).unref())]))
        .then(() => {
          if (stage.exited) return;
          killedSandbox = true;
          return p.job.killAll();
        }),
    // Nothing of a stage outlives its end (its PID namespace is empty by then).
    sweep: async () => {},
    // Its count includes the stage's own runbox-init, which is not the program's.
    processWatch: cgroup.procsFile,
    cpuNs: () => cgroup.cpuNs(),
    counters: async () => {
      const r = stage.report;
      if (r) return cgroup.counters(r.before, r.after);
      // The stage's end was never reported: its sandbox died with it. An OOM kill in the
      // job meanwhile (whichever task it took) is the program's doing: memory_limit.
      return { oomKills: p.job.oomKills() - oomKillsBefore + cgroup.oomKills(), taskLimitHits: 0, cpuNs: null, memoryPeakBytes: null };
    },
  };
  return { target, clean: () => !sandboxGone && !killedSandbox && !p.child.exited && stage.report !== null, cgroup };
}

// Removing an emptied job cgroup waits for the kernel to release it (milliseconds on
// cgroup v1). A job cgroup is never reused, so the outcome does not wait for that: the
// removal runs in the background and `removalsSettled` awaits the ones under way.
const removals = new Set<Promise<void>>();
/** Jobs whose removal failed (still busy after removeDir's retries): tried again by removalsSettled. */
const unremoved = new Set<Pick<JobCgroup, 'remove' | 'killAll'>>();

function removeLater(job: Pick<JobCgroup, 'remove' | 'killAll'>): void {
  const removal: Promise<void> = job
    .remove()
    .catch(() => {
      unremoved.add(job);
    })
    .finally(() => removals.delete(removal));
  removals.add(removal);
}

/** Resolves once every job cgroup this process finished with has been removed (or could not be). */
export async function removalsSettled(): Promise<void> {
  while (removals.size > 0) await Promise.all([...removals]);
  const retry = [...unremoved];
  unremoved.clear();
  await Promise.all(retry.map((job) => job.killAll().then(() => job.remove()).catch(() => {})));
}

/** What supervise watches: a launcher's one stage, or a stage in a pooled sandbox. */
interface StageTarget {
  /** The stage's streams, and its 'exit' (a launcher's exit; a pooled stage's end). */
  child: StageProcess;
  /** Sends the stage (StageProcess.run) and settles once its streams have ended. */
  run(io: StageIo): Promise<StageStreams>;
  /** Settles once the process `child` stands for has exited. */
  gone: Promise<void>;
  /** Kills the stage's processes (a forced stop), sparing the launcher until they are gone. */
  kill(): Promise<void>;
  /** Once `child` has exited: whatever it left behind goes. */
  sweep(): Promise<void>;
  /** The program's processes now (not the launcher's own), polled here; or else: */
  processCount?(): Promise<number>;
  /** A file listing the program's processes and the stage's init, which the fork server
   *  reads itself (no poll here, and no wake-up of this process while under the limit). */
  processWatch?: string;
  /** The stage's CPU time so far (ns; null when unreadable), for the CPU watchdog. */
  cpuNs(): number | null;
  counters(): Promise<JobCounters>;
}

/** The target of a launcher that runs one stage. */
function launcherTarget(p: Prepared): StageTarget {
  const { job, child, plan } = p;
  let exited = child.exited;
  child.once('exit', () => (exited = true));
  return {
    child,
    run: (io) => child.run(io),
    gone: p.gone,
    // The launcher goes last, once its sandbox is gone (see killUntilEmpty); if it
    // still hangs on after that, it goes too.
    kill: () =>
      job
        .killAll(child.pid)
        .then(() => Promise.race([p.gone, new Promise((r) => setTimeout(r, LAUNCHER_GRACE_MS).unref())]))
        .then(() => (exited ? undefined : job.killAll())),
    sweep: () => job.killAll(),
    processCount: async () => (await job.processIds()).length - plan.fixedProcesses,
    cpuNs: () => job.cpuNs(),
    counters: () => job.counters(),
  };
}

async function supervise(
  spec: SandboxSpec,
  limits: SandboxLimits,
  target: StageTarget,
  stageIn: Buffer,
  stdin: Buffer,
  onOver: (() => void) | undefined,
  stdinFile?: string,
): Promise<SandboxOutcome> {
  const { child } = target;
  let forced: Forced | null = null;
  let forcedWhy = '';
  // Which time limit a forced timeout is: the wall timer's or the CPU watchdog's.
  let stoppedBy: 'cpu' | 'wall' = 'wall';
  let killing: Promise<void> = Promise.resolve();

  const started = performance.now();
  child.ref();

  // When a forced stop began: the program's end as far as its order with a partner's
  // goes (its output closes when it dies, after this; its init may not live to say when).
  let forcedAtNs = 0n;
  const stop = (why: Forced, detail = '') => {
    if (forced) return;
    forced = why;
    forcedAtNs = process.hrtime.bigint();
    forcedWhy = detail;
    killing = target
      .kill()
      .catch((e: Error) => {
        forcedWhy += ` (kill failed: ${e.message})`;
      });
  };

  // The fork server writes stdin and stage-in (never blocking on a program that does
  // not read) and keeps the first bytes of each output stream.
  const streams = target.run({
    stdin,
    ...(stdinFile !== undefined ? { stdinFile } : {}),
    stageIn,
    // A judged run keeps its whole output (both streams together stay within the flood
    // bound); what the result shows is cut to the kept bytes below.
    keepBytes: spec.judged ? spec.judged.floodBytes : limits.outputKeepBytes,
    floodBytes: spec.judged ? spec.judged.floodBytes : limits.outputFloodBytes,
    stageOutBytes: limits.collectBytes + STAGE_OUT_SLACK_BYTES,
    logBytes: DIAGNOSTIC_BYTES,
    ...(spec.onOutput ? { onChunk: spec.judged ? keptChunks(spec.onOutput, limits.outputKeepBytes) : spec.onOutput } : {}),
    onFlood: () => stop('output_limit'),
    // A linked stage's stdin is held open for its partner's output.
    ...(spec.stdinFeed || spec.link ? { holdStdin: true } : {}),
    ...(target.processWatch
      ? { processes: { file: target.processWatch, max: limits.maxProcesses + 1, everyMs: limits.processPollMs, onOver: () => stop('process_limit') } }
      : {}),
  });
  spec.link?.started(child);
  // The stage process drops input once its streams are over; the feed is detached then too.
  const detachFeed = spec.stdinFeed?.attach(
    (chunk) => child.writeStdin(chunk),
    () => child.endStdin(),
  );

  const timer = setTimeout(() => stop('timeout'), limits.timeoutMs);
  // The CPU watchdog: the stage's CPU time is read when the limit could first be reached
  // (what is left of it spread over the stage's cores) and again so until it is, then the
  // stage is stopped; a stage whose timeout comes first is never read. An unreadable
  // counter leaves the verdict to the reading at the end (and the rlimit backstop).
  let cpuTimer: NodeJS.Timeout | undefined;
  const watchCpu = (afterMs: number) => {
    cpuTimer = setTimeout(() => {
      if (forced) return;
      const ns = target.cpuNs();
      if (ns === null) return;
      const leftMs = limits.cpuTimeMs - ns / 1e6;
      if (leftMs > 0) return watchCpu(Math.max(TIME_LIMIT_RULE.cpuWatchMinMs, leftMs / limits.cpuCores));
      stoppedBy = 'cpu';
      stop('timeout');
    }, afterMs);
  };
  if (limits.cpuTimeMs < limits.timeoutMs * limits.cpuCores) watchCpu(limits.cpuTimeMs / limits.cpuCores);
  let polling = false;
  const processCount = target.processCount?.bind(target);
  const poller = !processCount ? undefined : setInterval(() => {
    if (polling || forced) return;
    polling = true;
    processCount()
      .then((n) => {
        if (n > limits.maxProcesses) stop('process_limit');
      })
      .catch(() => {})
      .finally(() => (polling = false));
  }, limits.processPollMs);
  const onAbort = () => stop('internal_error', 'aborted');
  if (spec.signal?.aborted) onAbort();
  spec.signal?.addEventListener('abort', onAbort);

  let exit: { code: number | null; signal: NodeJS.Signals | null };
  let exitedAtNs = 0n;
  let io: StageStreams;
  // The stage could not be sent (a pooled sandbox whose launcher died as it was entered): nothing ran.
  let notSent: string | undefined;
  try {
    exit = await new Promise((resolve) => {
      const onExit = () => {
        exitedAtNs = process.hrtime.bigint();
        // Whatever the launcher left behind goes too, so every stream reaches its end.
        killing = killing.then(() => target.sweep()).catch(() => {});
        resolve({ code: child.exitCode, signal: child.signalCode });
      };
      if (child.exited) onExit();
      else child.once('exit', onExit);
    });
    io = await streams.catch((e: Error) => {
      notSent = e.message;
      const none = Buffer.alloc(0);
      return { stdout: none, stderr: none, stdoutTotal: 0, stderrTotal: 0, stageOut: none, stageOutOverflow: false, log: none };
    });
  } finally {
    detachFeed?.();
    clearTimeout(timer);
    clearTimeout(cpuTimer);
    clearInterval(poller);
    spec.signal?.removeEventListener('abort', onAbort);
  }
  const wallMs = performance.now() - started;
  await killing;
  onOver?.();

  let counters: JobCounters = { oomKills: 0, taskLimitHits: 0, cpuNs: null, memoryPeakBytes: null };
  try {
    counters = await target.counters();
  } catch {
    // counters are informational
  }
  const out = decodeStageOut(io.stageOut, limits.collectBytes);
  const stageOutOverflow = io.stageOutOverflow;

  const base = {
    stdout: io.stdout.subarray(0, limits.outputKeepBytes),
    stderr: io.stderr.subarray(0, limits.outputKeepBytes),
    ...(spec.judged ? { wholeStdout: io.stdout } : {}),
    stdoutTruncated: io.stdoutTotal > limits.outputKeepBytes,
    stderrTruncated: io.stderrTotal > limits.outputKeepBytes,
    outputBytes: io.stdoutTotal + io.stderrTotal,
    cpuMs: counters.cpuNs === null ? null : counters.cpuNs / 1e6,
    wallMs,
    memoryPeakBytes: counters.memoryPeakBytes,
    endedAtNs: forced ? forcedAtNs : (out.endedAtNs ?? exitedAtNs),
    collected: [] as SandboxOutcome['collected'],
    omitted: [] as SandboxOutcome['omitted'],
  };
  const verdict = (status: SandboxStatus, exitCode: number | null, signal: number | null, diagnostic?: string): SandboxOutcome =>
    diagnostic === undefined ? { ...base, status, exitCode, signal } : { ...base, status, exitCode, signal, diagnostic };
  // Every timeout reports SIGKILL, whichever limit it was and however the program ended.
  const timedOut = (limit: 'cpu' | 'wall'): SandboxOutcome => ({ ...verdict('timeout', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal), limitExceeded: limit });

  const { killedExitCode, killedSignal } = VERDICT_CODES;
  switch (forced as Forced | null) {
    case 'output_limit':
      return verdict('output_limit', VERDICT_CODES.outputLimitExitCode, VERDICT_CODES.outputLimitSignal);
    case 'process_limit':
      return verdict('process_limit', VERDICT_CODES.processLimitExitCode, null);
    case 'timeout':
      return timedOut(stoppedBy);
    case 'memory_limit':
      return verdict('memory_limit', killedExitCode, killedSignal);
    case 'internal_error':
      return verdict('internal_error', null, null, forcedWhy || 'stopped');
    default:
      break;
  }
  if (notSent !== undefined) return verdict('internal_error', null, null, notSent);
  if (counters.oomKills > 0) return verdict('memory_limit', killedExitCode, killedSignal);
  // Past its CPU time (a lowered one: the default is out of reach within the timeout).
  if (base.cpuMs !== null && base.cpuMs > limits.cpuTimeMs) return timedOut('cpu');
  const why = out.error ?? (stageOutOverflow ? 'stage-out stream too large' : undefined);
  const launcherText = () => {
    const text = Buffer.concat([io.log, Buffer.from('\n'), io.stderr.subarray(0, DIAGNOSTIC_BYTES)]).toString('utf8');
    return `launcher exit ${exit.code ?? exit.signal}; ${text.trim()}`;
  };
  if (!out.end) return verdict('internal_error', null, null, `${why ?? 'no end record from runbox-init'}; ${launcherText()}`);
  // The program ran and its end came first: a stream spoilt after it costs files, not the outcome.
  base.collected = out.files;
  base.omitted = out.omitted;
  // Stopped by the CPU-time rlimit (the backstop, or one the program set itself): a
  // timeout, whatever the cgroup's reading says.
  if (out.end.kind === 'signaled' && out.end.signal === constants.signals.SIGXCPU) return timedOut('cpu');
  const ended = out.end.kind === 'exited'
    ? verdict('exited', out.end.code, null)
    : verdict('signaled', 128 + out.end.signal, out.end.signal);
  return why === undefined ? ended : { ...ended, collectLost: why };
}

/** Streams a judged run's output as any run's: the first kept bytes of each stream. */
function keptChunks(onOutput: NonNullable<SandboxSpec['onOutput']>, keepBytes: number): NonNullable<SandboxSpec['onOutput']> {
  const sent = { stdout: 0, stderr: 0 };
  return (stream, chunk) => {
    const room = keepBytes - sent[stream];
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    sent[stream] += part.length;
    onOutput(stream, part);
  };
}
