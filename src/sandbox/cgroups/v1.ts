import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killUntilEmpty, readPids, removeDir, sweepStaleJobs } from './kill.js';
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
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const [k, v] = line.trim().split(/\s+/);
      if (k === key) return Number(v) || 0;
    }
  } catch {
    // a missing counter reads as zero
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

  async createJob(limits: JobLimits): Promise<JobCgroup> {
    const name = `job-${this.pid}-${++jobSeq}`;
    // Hierarchies may be co-mounted (cpu,cpuacct): one directory each.
    const dirs = {} as Record<V1Controller, string>;
    for (const c of V1_CONTROLLERS) dirs[c] = join(this.own[c], name);
    const unique = [...new Set(Object.values(dirs))];
    const program = [...new Set([dirs.memory, dirs.cpuacct])].map((d) => join(d, PROGRAM));
    const job = new JobV1(dirs, unique, program);
    try {
      for (const d of [...unique, ...program]) mkdirSync(d);
      writeFileSync(join(dirs.memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // No swap: memsw (memory + swap) gets the same cap, when the kernel accounts swap.
      const memsw = join(dirs.memory, 'memory.memsw.limit_in_bytes');
      if (existsSync(memsw)) writeFileSync(memsw, String(limits.memoryBytes));
      // Socket buffers: v1 keeps them out of memory.limit_in_bytes and charges them only
      // in cgroups whose TCP limit was set (sockets are charged where they are made: the
      // program's cgroup). Without it, parked loopback buffers are unbounded and unseen.
      for (const d of [dirs.memory, join(dirs.memory, PROGRAM)]) {
        const tcp = join(d, 'memory.kmem.tcp.limit_in_bytes');
        if (existsSync(tcp)) writeFileSync(tcp, String(limits.memoryBytes));
      }
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
  ) {
    this.procsFiles = unique.map((d) => join(d, 'cgroup.procs'));
    this.programProcsFiles = program.map((d) => join(d, 'cgroup.procs'));
  }

  async processIds(): Promise<number[]> {
    return readPids(join(this.dirs.pids, 'cgroup.procs'));
  }

  async counters(): Promise<JobCounters> {
    // v1 counts an OOM kill where the victim lives: the program's cgroup or the job.
    const memory = join(this.dirs.memory, PROGRAM);
    return {
      oomKills: readKeyed(join(this.dirs.memory, 'memory.oom_control'), 'oom_kill') + readKeyed(join(memory, 'memory.oom_control'), 'oom_kill'),
      taskLimitHits: readKeyed(join(this.dirs.pids, 'pids.events'), 'max'),
      cpuNs: readNumber(join(this.dirs.cpuacct, PROGRAM, 'cpuacct.usage')),
      memoryPeakBytes: peakWithSockets(readNumber(join(memory, 'memory.max_usage_in_bytes')), readNumber(join(memory, 'memory.kmem.tcp.max_usage_in_bytes'))),
    };
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
    const dirs = [...new Set([memory, join(this.dirs.cpuacct, name)])];
    const jobOom = join(this.dirs.memory, 'memory.oom_control');
    const jobPids = join(this.dirs.pids, 'pids.events');
    const base = { oom: readKeyed(jobOom, 'oom_kill'), hits: readKeyed(jobPids, 'max') };
    const made: string[] = [];
    try {
      for (const d of dirs) {
        mkdirSync(d);
        made.push(d);
      }
      const tcp = join(memory, 'memory.kmem.tcp.limit_in_bytes');
      if (existsSync(tcp)) writeFileSync(tcp, readFileSync(join(this.dirs.memory, 'memory.kmem.tcp.limit_in_bytes')));
    } catch (e) {
      for (const d of made.reverse()) removeDir(d).catch(() => {});
      throw e;
    }
    const procsFiles = dirs.map((d) => join(d, 'cgroup.procs'));
    return {
      procsFiles,
      processIds: async () => readPids(join(memory, 'cgroup.procs')),
      counters: async () => ({
        oomKills: readKeyed(jobOom, 'oom_kill') - base.oom + readKeyed(join(memory, 'memory.oom_control'), 'oom_kill'),
        taskLimitHits: readKeyed(jobPids, 'max') - base.hits,
        cpuNs: readNumber(join(this.dirs.cpuacct, name, 'cpuacct.usage')),
        memoryPeakBytes: peakWithSockets(readNumber(join(memory, 'memory.max_usage_in_bytes')), readNumber(join(memory, 'memory.kmem.tcp.max_usage_in_bytes'))),
      }),
      killAll: async () => {
        for (const f of procsFiles) await killUntilEmpty(f);
      },
      remove: async () => {
        for (const d of [...dirs].reverse()) await removeDir(d);
      },
    };
  }
}
