// What the sandbox needs from a job cgroup, whatever the cgroup version.

export interface JobLimits {
  /** The program's memory (its own cgroup's limit where it has one; the job gets
   *  SANDBOX_OVERHEAD more for the sandbox's processes). */
  memoryBytes: number;
  cpuCores: number;
  maxTasks: number;
}

export interface JobCounters {
  /** Processes the kernel's OOM killer killed in the job. */
  oomKills: number;
  /** Times a fork or thread creation hit the task cap. */
  taskLimitHits: number;
  /** CPU time of the program (runbox-init and what it runs, not the launcher); null when unavailable. */
  cpuNs: number | null;
  /** Peak memory of the program (tmpfs included, not the launcher); null when unavailable. */
  memoryPeakBytes: number | null;
}

/** The cgroup of one stage in a pooled sandbox, made fresh below the sandbox's job for
 *  each stage so that its counters are the stage's alone (the job's limits hold it). The
 *  fork server makes it, reads its counters and removes it (native/forkserver/stage.c
 *  `enter`): no file system call of the runner's own on a stage's path. */
export interface StageCgroup {
  /** Directories to make, in order (removed in reverse); the stage joins each one's cgroup.procs. */
  readonly dirs: readonly string[];
  /** cgroup.procs files of cgroups that outlive the stage, which it joins too (a counter
   *  whose difference over the stage is exact needs no cgroup of its own). */
  readonly joins: readonly string[];
  /** [file, value] written once they are made (the stage's own limits). */
  readonly writes: readonly (readonly [string, string])[];
  /** Counter files read before the stage and after it. */
  readonly counterFiles: readonly string[];
  /** [file, value] written at the stage's end, before its directories are removed, when
   *  `usageFile` reads more than SANDBOX_OVERHEAD.drainAboveBytes: what it left charged
   *  (page cache, dentries) is reclaimed then, not by the next stage. */
  readonly drains: readonly (readonly [string, string])[];
  /** The stage's own memory in use. */
  readonly usageFile: string;
  /** The job's memory in use, read once the stage's directories are gone: a pooled
   *  sandbox whose job holds much more than before its first stage is not reused. */
  readonly settleFile: string;
  /** The cgroup.procs file that lists the stage's processes (its runbox-init included),
   *  which the fork server watches for the process limit. */
  readonly procsFile: string;
  /** The stage's CPU time so far (ns; null when unreadable): what the runner's CPU
   *  watchdog reads while it runs. */
  cpuNs(): number | null;
  /** The stage's time and peak memory, the job's OOM kills and task-cap hits during it,
   *  from the counter files' texts before and after. */
  counters(before: readonly string[], after: readonly string[]): JobCounters;
  /** OOM kills in the stage's own cgroup so far (where the job's count does not include
   *  them): for a stage whose end was never reported (its sandbox died). */
  oomKills(): number;
  /** Kills every process of the stage and returns once none is left. */
  killAll(): Promise<void>;
  /** Removes the directories (when the fork server could not: still busy). */
  remove(): Promise<void>;
}

export interface JobCgroup {
  /** The cgroup.procs files a process writes "0" to in order to join the job. */
  readonly procsFiles: readonly string[];
  /** The cgroup.procs files of the program's own cgroups below the job, which runbox-init
   *  joins (through descriptors opened by the runner), so that the counters measure the
   *  program and not the launcher. Empty where the job is measured as a whole. */
  readonly programProcsFiles: readonly string[];
  /** Distinct processes (not threads) in the job now. */
  processIds(): Promise<number[]>;
  counters(): Promise<JobCounters>;
  /** The program's CPU time so far (ns; null when unreadable), read at once: what the
   *  runner's CPU watchdog reads while a stage runs. */
  cpuNs(): number | null;
  /** OOM kills anywhere in the job so far (read at once). */
  oomKills(): number;
  /** Kills every process in the job but `spare` and returns once none of them is left. */
  killAll(spare?: number): Promise<void>;
  /** Removes the (empty) job cgroup. */
  remove(): Promise<void>;
  /** A fresh cgroup for the next stage of a pooled sandbox in this job (absent where the
   *  back end cannot measure a stage apart from the sandbox's own processes). */
  createStage?(): StageCgroup;
}

export interface CgroupBackend {
  readonly version: 1 | 2;
  /** A job cgroup with `limits`; `pooled`: for a pooled sandbox, which gives each of its
   *  stages a cgroup of its own below the job (JobCgroup.createStage). */
  createJob(limits: JobLimits, opts?: { pooled?: boolean }): Promise<JobCgroup>;
  /** Kills and removes job cgroups left by a runner process that is gone; returns their paths. */
  sweepStale(): Promise<string[]>;
}
