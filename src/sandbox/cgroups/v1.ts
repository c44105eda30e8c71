import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killUntilEmpty, readPids, removeDir, sweepStaleJobs } from './kill.js';
import { SANDBOX_OVERHEAD } from '../../limits.js';
import type { CgroupBackend, JobCgroup, JobCounters, JobLimits, StageCgroup } from './types.js';

// cgroup v1: one directory per controller hierarchy. Counters only move in the cgroup
// the process lives in, so every job gets its own directory in each hierarchy.

export const V1_CONTROLLERS = ['memory', 'pids', 'cpu', 'cpuacct'] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

const CPU_PERIOD_US = 100_000;
/** The program's cgroup below the job in the memory and cpuacct hierarchies: the
 *  launcher (nsjail, bwrap) stays in the job, limited with the program but not counted. */
const PROGRAM = 'program';
let jobSeq = 0;
let stageSeq = 0;

// Cgroup files are read and written synchronously: see kill.ts.

export function readNumber(file: string): number | null {
  try {
    const n = Number(readFileSync(file, 'utf8').trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

/** The number after `key` in a "key value" per line file; 0 when absent. */
export function readKeyed(file: string, key: string): number {
  try {
    return keyed(readFileSync(file, 'utf8'), key);
  } catch {
    return 0; // a missing counter reads as zero
  }
}

/** The number after `key` in "key value" lines; 0 when absent. */
export function keyed(text: string | undefined, key: string): number {
  for (const line of (text ?? '').split('\n')) {
    const [k, v] = line.trim().split(/\s+/);
    if (k === key) return Number(v) || 0;
  }
  return 0;
}

export class CgroupV1 implements CgroupBackend {
  readonly version = 1 as const;

  /** `own`: the runner's own cgroup directory in each hierarchy. */
  constructor(
    readonly own: Readonly<Record<V1Controller, string>>,
    private readonly pid: number,
  ) {}

  sweepStale(): Promise<string[]> {
    return sweepStaleJobs([...new Set(Object.values(this.own))], this.pid);
  }

  async createJob(limits: JobLimits, _opts: { pooled?: boolean } = {}): Promise<JobCgroup> {
    const name = `job-${this.pid}-${++jobSeq}`;
    // Hierarchies may be co-mounted (cpu,cpuacct): one directory each.
    const dirs = {} as Record<V1Controller, string>;
    for (const c of V1_CONTROLLERS) dirs[c] = join(this.own[c], name);
    const unique = [...new Set(Object.values(dirs))];
    const program = [...new Set([dirs.memory, dirs.cpuacct])].map((d) => join(d, PROGRAM));
    // The runner's own cgroup shows which files a job's will have (it is made below).
    const has = (file: string) => existsSync(join(this.own.memory, file));
    const job = new JobV1(dirs, unique, program, limits.memoryBytes, has('memory.kmem.tcp.limit_in_bytes'), has('memory.memsw.limit_in_bytes'));
    try {
      for (const d of [...unique, ...program]) mkdirSync(d);
      // The job holds the sandbox's processes too; the program's own cgroup (and each
      // pooled stage's) is held to the program's limit, so an OOM kill lands there.
      job.limitMemory(dirs.memory, limits.memoryBytes + SANDBOX_OVERHEAD.memoryBytes);
      job.limitMemory(join(dirs.memory, PROGRAM), limits.memoryBytes);
      writeFileSync(join(dirs.pids, 'pids.max'), String(limits.maxTasks));
      writeFileSync(join(dirs.cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
      writeFileSync(join(dirs.cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpuCores * CPU_PERIOD_US)));
    } catch (e) {
      await job.remove().catch(() => {});
      throw e;
    }
    return job;
  }
}

/** v1's peak memory and its separate peak of socket buffers, together (either may be missing). */
function peakWithSockets(memory: number | null, sockets: number | null): number | null {
  return memory === null ? null : memory + (sockets ?? 0);
}

class JobV1 implements JobCgroup {
  readonly procsFiles: readonly string[];
  readonly programProcsFiles: readonly string[];

  constructor(
    private readonly dirs: Readonly<Record<V1Controller, string>>,
    private readonly unique: readonly string[],
    private readonly program: readonly string[],
    /** The program's memory limit: its own cgroup's, and each pooled stage's. */
    private readonly memoryBytes: number,
    /** Whether the kernel has a cap on socket buffers (memory.kmem.tcp.limit_in_bytes). */
    private readonly tcp: boolean,
    /** Whether it accounts swap (memory.memsw.limit_in_bytes). */
    private readonly memsw: boolean,
  ) {
    this.procsFiles = unique.map((d) => join(d, 'cgroup.procs'));
    this.programProcsFiles = program.map((d) => join(d, 'cgroup.procs'));
  }

  /** The writes that hold memory cgroup `dir` to `bytes`: memory, memory + swap (no swap
   *  at all) and socket buffers, which v1 keeps out of memory.limit_in_bytes and charges
   *  only in cgroups whose TCP limit was set (without it, parked loopback buffers are
   *  unbounded and unseen; sockets are charged where they are made: the program's cgroup). */
  memoryWrites(dir: string, bytes: number): [string, string][] {
    const writes: [string, string][] = [[join(dir, 'memory.limit_in_bytes'), String(bytes)]];
    if (this.memsw) writes.push([join(dir, 'memory.memsw.limit_in_bytes'), String(bytes)]);
    if (this.tcp) writes.push([join(dir, 'memory.kmem.tcp.limit_in_bytes'), String(bytes)]);
    return writes;
  }

  limitMemory(dir: string, bytes: number): void {
    for (const [file, value] of this.memoryWrites(dir, bytes)) writeFileSync(file, value);
  }

  async processIds(): Promise<number[]> {
    return readPids(join(this.dirs.pids, 'cgroup.procs'));
  }

  oomKills(): number {
    return readKeyed(join(this.dirs.memory, 'memory.oom_control'), 'oom_kill') + readKeyed(join(this.dirs.memory, PROGRAM, 'memory.oom_control'), 'oom_kill');
  }

  async counters(): Promise<JobCounters> {
    // v1 counts an OOM kill where the victim lives: the program's cgroup or the job.
    const memory = join(this.dirs.memory, PROGRAM);
    return {
      oomKills: this.oomKills(),
      taskLimitHits: readKeyed(join(this.dirs.pids, 'pids.events'), 'max'),
      cpuNs: this.cpuNs(),
      memoryPeakBytes: peakWithSockets(readNumber(join(memory, 'memory.max_usage_in_bytes')), readNumber(join(memory, 'memory.kmem.tcp.max_usage_in_bytes'))),
    };
  }

  cpuNs(): number | null {
    return readNumber(join(this.dirs.cpuacct, PROGRAM, 'cpuacct.usage'));
  }

  async killAll(spare?: number): Promise<void> {
    // Every hierarchy holds the same processes once joined; a process that had joined
    // only some of them (a launcher that failed to start) is caught by checking each.
    for (const f of [...this.programProcsFiles, ...this.procsFiles]) await killUntilEmpty(f, spare);
  }

  async remove(): Promise<void> {
    for (const d of [...this.program, ...this.unique]) await removeDir(d);
  }

  createStage(): StageCgroup {
    const name = `stage-${++stageSeq}`;
    const memory = join(this.dirs.memory, name);
    // CPU time is the difference of cpuacct.usage over the stage in the job's program
    // cgroup, which every stage joins: exact, and no cgroup to make and remove (a v1
    // cgroup costs a directory of files to make and an RCU wait to leave). Memory needs
    // a fresh cgroup: a reused one would hold page cache charged by earlier stages.
    // (Co-mounted with memory, the stage's own directory counts it.)
    const shared = this.dirs.cpuacct === this.dirs.memory;
    const cpuacct = shared ? memory : join(this.dirs.cpuacct, PROGRAM);
    const dirs = [memory];
    const joins = shared ? [] : [join(cpuacct, 'cgroup.procs')];
    const files = [
      join(this.dirs.memory, 'memory.oom_control'),
      join(this.dirs.pids, 'pids.events'),
      join(memory, 'memory.oom_control'),
      join(cpuacct, 'cpuacct.usage'),
      join(memory, 'memory.max_usage_in_bytes'),
      join(memory, 'memory.kmem.tcp.max_usage_in_bytes'),
    ];
    const procsFiles = dirs.map((d) => join(d, 'cgroup.procs'));
    // The shared counter as the stage starts (the sandbox is idle between stages); a
    // stage directory of its own starts at zero (and is made by the fork server).
    const cpuBefore = shared ? 0 : (readNumber(join(cpuacct, 'cpuacct.usage')) ?? 0);
    return {
      dirs,
      joins,
      // Held to the program's limit below the job's: an OOM kill lands on the stage.
      writes: this.memoryWrites(memory, this.memoryBytes),
      counterFiles: files,
      drains: [[join(memory, 'memory.force_empty'), '0']],
      usageFile: join(memory, 'memory.usage_in_bytes'),
      settleFile: join(this.dirs.memory, 'memory.usage_in_bytes'),
      procsFile: join(memory, 'cgroup.procs'),
      counters: (before, after) => {
        const num = (t: string | undefined) => (t === undefined || t.trim() === '' ? null : Number(t.trim()));
        return {
          oomKills: keyed(after[0], 'oom_kill') - keyed(before[0], 'oom_kill') + keyed(after[2], 'oom_kill'),
          taskLimitHits: keyed(after[1], 'max') - keyed(before[1], 'max'),
          cpuNs: num(after[3]) === null ? null : num(after[3])! - (num(before[3]) ?? 0),
          memoryPeakBytes: peakWithSockets(num(after[4]), num(after[5])),
        };
      },
      cpuNs: () => {
        const now = readNumber(join(cpuacct, 'cpuacct.usage'));
        return now === null ? null : now - cpuBefore;
      },
      oomKills: () => readKeyed(join(memory, 'memory.oom_control'), 'oom_kill'),
      killAll: async () => {
        for (const f of procsFiles) await killUntilEmpty(f);
      },
      remove: async () => {
        for (const d of [...dirs].reverse()) await removeDir(d);
      },
    };
  }
}
