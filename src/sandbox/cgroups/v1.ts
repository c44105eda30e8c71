import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { killUntilEmpty, readPids, removeDir } from './kill.js';
import type { CgroupBackend, JobCgroup, JobCounters, JobLimits } from './types.js';

// cgroup v1: one directory per controller hierarchy. Counters only move in the cgroup
// the process lives in, so every job gets its own directory in each hierarchy.

export const V1_CONTROLLERS = ['memory', 'pids', 'cpu', 'cpuacct'] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

const CPU_PERIOD_US = 100_000;
let jobSeq = 0;

const exists = (p: string) => access(p).then(() => true, () => false);

async function readNumber(file: string): Promise<number | null> {
  try {
    const n = Number((await readFile(file, 'utf8')).trim());
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

/** The number after `key` in a "key value" per line file; 0 when absent. */
export async function readKeyed(file: string, key: string): Promise<number> {
  try {
    for (const line of (await readFile(file, 'utf8')).split('\n')) {
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

  async createJob(limits: JobLimits): Promise<JobCgroup> {
    const name = `job-${this.pid}-${++jobSeq}`;
    // Hierarchies may be co-mounted (cpu,cpuacct): one directory each.
    const dirs = {} as Record<V1Controller, string>;
    for (const c of V1_CONTROLLERS) dirs[c] = join(this.own[c], name);
    const unique = [...new Set(Object.values(dirs))];
    const job = new JobV1(dirs, unique);
    try {
      for (const d of unique) await mkdir(d);
      await writeFile(join(dirs.memory, 'memory.limit_in_bytes'), String(limits.memoryBytes));
      // No swap: memsw (memory + swap) gets the same cap, when the kernel accounts swap.
      const memsw = join(dirs.memory, 'memory.memsw.limit_in_bytes');
      if (await exists(memsw)) await writeFile(memsw, String(limits.memoryBytes));
      await writeFile(join(dirs.pids, 'pids.max'), String(limits.maxTasks));
      await writeFile(join(dirs.cpu, 'cpu.cfs_period_us'), String(CPU_PERIOD_US));
      await writeFile(join(dirs.cpu, 'cpu.cfs_quota_us'), String(Math.round(limits.cpuCores * CPU_PERIOD_US)));
    } catch (e) {
      await job.remove().catch(() => {});
      throw e;
    }
    return job;
  }
}

class JobV1 implements JobCgroup {
  readonly procsFiles: readonly string[];

  constructor(
    private readonly dirs: Readonly<Record<V1Controller, string>>,
    private readonly unique: readonly string[],
  ) {
    this.procsFiles = unique.map((d) => join(d, 'cgroup.procs'));
  }

  processIds(): Promise<number[]> {
    return readPids(join(this.dirs.pids, 'cgroup.procs'));
  }

  async counters(): Promise<JobCounters> {
    return {
      oomKills: await readKeyed(join(this.dirs.memory, 'memory.oom_control'), 'oom_kill'),
      taskLimitHits: await readKeyed(join(this.dirs.pids, 'pids.events'), 'max'),
      cpuNs: await readNumber(join(this.dirs.cpuacct, 'cpuacct.usage')),
      memoryPeakBytes: await readNumber(join(this.dirs.memory, 'memory.max_usage_in_bytes')),
    };
  }

  async killAll(spare?: number): Promise<void> {
    // Every hierarchy holds the same processes once joined; a process that had joined
    // only some of them (a failed shim) is caught by checking each.
    for (const f of this.procsFiles) await killUntilEmpty(f, spare);
  }

  async remove(): Promise<void> {
    for (const d of this.unique) await removeDir(d, rmdir);
  }
}
