// What the sandbox needs from a job cgroup, whatever the cgroup version.

export interface JobLimits {
  memoryBytes: number;
  cpuCores: number;
  maxTasks: number;
}

export interface JobCounters {
  /** Processes the kernel's OOM killer killed in the job. */
  oomKills: number;
  /** Times a fork or thread creation hit the task cap. */
  taskLimitHits: number;
  /** CPU time of the whole job; null when unavailable. */
  cpuNs: number | null;
  /** Peak memory of the whole job (tmpfs included); null when unavailable. */
  memoryPeakBytes: number | null;
}

export interface JobCgroup {
  /** The cgroup.procs files a process writes "0" to in order to join the job. */
  readonly procsFiles: readonly string[];
  /** Distinct processes (not threads) in the job now. */
  processIds(): Promise<number[]>;
  counters(): Promise<JobCounters>;
  /** Kills every process in the job but `spare` and returns once none of them is left. */
  killAll(spare?: number): Promise<void>;
  /** Removes the (empty) job cgroup. */
  remove(): Promise<void>;
}

export interface CgroupBackend {
  readonly version: 1 | 2;
  createJob(limits: JobLimits): Promise<JobCgroup>;
  /** Kills and removes job cgroups left by a runner process that is gone; returns their paths. */
  sweepStale(): Promise<string[]>;
}
