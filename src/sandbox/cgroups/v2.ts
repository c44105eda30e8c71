import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { killUntilEmpty, readPids, removeDir, sweepStaleJobs } from './kill.js';
import { SANDBOX_OVERHEAD } from '../../limits.js';
import type { CgroupBackend, JobCgroup, JobCounters, JobLimits, StageCgroup } from './types.js';
import { keyed, readKeyed, readNumber } from './v1.js';

// cgroup v2 (production hosts). A cgroup with processes cannot hand controllers to its
// children, so set-up moves the runner's processes into a leaf <own>/runner and enables
// the controllers in <own>; jobs are then siblings of that leaf: <own>/job-<pid>-<n>.

export const V2_CONTROLLERS = ['memory', 'pids', 'cpu'] as const;
const CPU_PERIOD_US = 100_000;
let jobSeq = 0;
let stageSeq = 0;
/** A pooled sandbox's launcher and init, in a leaf of the job: a cgroup that hands
 *  controllers to its children (each stage's) may hold no process itself. */
const SANDBOX_LEAF = 'sandbox';


export class CgroupV2 implements CgroupBackend {
  readonly version = 2 as const;

  private constructor(
    readonly own: string,
    private readonly pid: number,
    /** Whether the kernel accounts swap (memory.swap.max exists in memory-enabled children). */
    private readonly swapAccounting: boolean,
  ) {}

  /** `own`: the runner's own cgroup directory (before it moved into `runner`). */
  static async setUp(own: string, pid: number): Promise<CgroupV2> {
    const leaf = join(own, 'runner');
    mkdirSync(leaf, { recursive: true });
    for (const p of readPids(join(own, 'cgroup.procs'))) writeFileSync(join(leaf, 'cgroup.procs'), String(p));
    writeFileSync(join(own, 'cgroup.subtree_control'), V2_CONTROLLERS.map((c) => `+${c}`).join(' '));
    return new CgroupV2(own, pid, existsSync(join(leaf, 'memory.swap.max')));
  }

  sweepStale(): Promise<string[]> {
    return sweepStaleJobs([this.own], this.pid);
  }

  async createJob(limits: JobLimits, opts: { pooled?: boolean } = {}): Promise<JobCgroup> {
    const dir = join(this.own, `job-${this.pid}-${++jobSeq}`);
    mkdirSync(dir);
    const job = opts.pooled ? new PooledJobV2(dir, limits.memoryBytes, this.swapAccounting) : new JobV2(dir);
    try {
      // A pooled job holds the sandbox's processes beside its stages, each stage held to
      // the program's limit (an OOM kill lands there); otherwise the job is the program's.
      writeFileSync(join(dir, 'memory.max'), String(limits.memoryBytes + (opts.pooled ? SANDBOX_OVERHEAD.memoryBytes : 0)));
      // tmpfs pages count in memory.max; none may go to swap.
      if (this.swapAccounting) writeFileSync(join(dir, 'memory.swap.max'), '0');
      writeFileSync(join(dir, 'pids.max'), String(limits.maxTasks));
      writeFileSync(join(dir, 'cpu.max'), `${Math.round(limits.cpuCores * CPU_PERIOD_US)} ${CPU_PERIOD_US}`);
      if (opts.pooled) {
        mkdirSync(join(dir, SANDBOX_LEAF));
        writeFileSync(join(dir, 'cgroup.subtree_control'), V2_CONTROLLERS.map((c) => `+${c}`).join(' '));
      }
    } catch (e) {
      await job.remove().catch(() => {});
      throw e;
    }
    return job;
  }
}

export class JobV2 implements JobCgroup {
  readonly procsFiles: readonly string[];
  // One hierarchy: a program cgroup below the job would need the launcher in a leaf of
  // its own too (no processes in inner cgroups); the job is measured as a whole.
  readonly programProcsFiles: readonly string[] = [];

  constructor(readonly dir: string) {
    this.procsFiles = [join(dir, 'cgroup.procs')];
  }

  async processIds(): Promise<number[]> {
    return readPids(join(this.dir, 'cgroup.procs'));
  }

  oomKills(): number {
    // memory.events counts the whole subtree (memory.events.local is the cgroup's own).
    return readKeyed(join(this.dir, 'memory.events'), 'oom_kill');
  }

  async counters(): Promise<JobCounters> {
    return {
      oomKills: this.oomKills(),
      taskLimitHits: readKeyed(join(this.dir, 'pids.events'), 'max'),
      cpuNs: this.cpuNs(),
      // memory.peak needs Linux 5.19: null before
      memoryPeakBytes: readNumber(join(this.dir, 'memory.peak')),
    };
  }

  cpuNs(): number | null {
    return usageNs(join(this.dir, 'cpu.stat'));
  }

  async killAll(spare?: number): Promise<void> {
    // cgroup.kill takes everything at once, the launcher too: only without a spare.
    const killFile = join(this.dir, 'cgroup.kill');
    if (spare === undefined && existsSync(killFile)) writeFileSync(killFile, '1');
    await killUntilEmpty(join(this.dir, 'cgroup.procs'), spare);
  }

  async remove(): Promise<void> {
    await removeDir(this.dir);
  }
}

/** The job of a pooled sandbox: its launcher and init in the `sandbox` leaf, each stage
 *  in a `stage-N` leaf beside it (made and removed by the fork server), all below the
 *  job's limits. A stage's cgroup is fresh, so its counters are its own: cpu.stat and
 *  memory.peak (Linux 5.19) of the stage, the job's OOM kills and task-cap hits during it. */
export class PooledJobV2 extends JobV2 {
  override readonly procsFiles: readonly string[];

  constructor(
    dir: string,
    /** Each stage's memory.max: the program's limit. */
    private readonly memoryBytes: number,
    private readonly swapAccounting: boolean,
  ) {
    super(dir);
    this.procsFiles = [join(dir, SANDBOX_LEAF, 'cgroup.procs')];
  }

  private leaves(): string[] {
    try {
      return readdirSync(this.dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(this.dir, d.name));
    } catch {
      return [];
    }
  }

  override async processIds(): Promise<number[]> {
    return this.leaves().flatMap((d) => readPids(join(d, 'cgroup.procs')));
  }

  override async killAll(spare?: number): Promise<void> {
    const killFile = join(this.dir, 'cgroup.kill');
    if (spare === undefined && existsSync(killFile)) writeFileSync(killFile, '1');
    for (const d of this.leaves()) await killUntilEmpty(join(d, 'cgroup.procs'), spare);
  }

  override async remove(): Promise<void> {
    for (const d of this.leaves()) await removeDir(d);
    await removeDir(this.dir);
  }

  createStage(): StageCgroup {
    const stage = join(this.dir, `stage-${++stageSeq}`);
    const procs = join(stage, 'cgroup.procs');
    return {
      dirs: [stage],
      joins: [],
      writes: [[join(stage, 'memory.max'), String(this.memoryBytes)], ...(this.swapAccounting ? [[join(stage, 'memory.swap.max'), '0'] as [string, string]] : [])],
      counterFiles: [join(this.dir, 'memory.events'), join(this.dir, 'pids.events'), join(stage, 'cpu.stat'), join(stage, 'memory.peak')],
      // memory.reclaim (Linux 5.19) reclaims up to the amount written; a dying cgroup
      // would otherwise keep its page cache charged above the job.
      drains: [[join(stage, 'memory.reclaim'), String(this.memoryBytes + SANDBOX_OVERHEAD.memoryBytes)]],
      usageFile: join(stage, 'memory.current'),
      settleFile: join(this.dir, 'memory.current'),
      procsFile: procs,
      counters: (before, after) => ({
        oomKills: keyed(after[0], 'oom_kill') - keyed(before[0], 'oom_kill'),
        taskLimitHits: keyed(after[1], 'max') - keyed(before[1], 'max'),
        cpuNs: after[2]?.includes('usage_usec') ? keyed(after[2], 'usage_usec') * 1000 : null,
        memoryPeakBytes: after[3]?.trim() ? Number(after[3].trim()) : null,
      }),
      cpuNs: () => usageNs(join(stage, 'cpu.stat')),
      // Counted in the job's memory.events, which covers its stages.
      oomKills: () => 0,
      killAll: async () => {
        if (existsSync(join(stage, 'cgroup.kill'))) writeFileSync(join(stage, 'cgroup.kill'), '1');
        await killUntilEmpty(procs);
      },
      remove: () => removeDir(stage),
    };
  }
}

/** usage_usec of a cpu.stat file, in ns; null when there is none. */
function usageNs(file: string): number | null {
  try {
    const text = readFileSync(file, 'utf8');
    return text.includes('usage_usec') ? keyed(text, 'usage_usec') * 1000 : null;
  } catch {
    return null;
  }
}
