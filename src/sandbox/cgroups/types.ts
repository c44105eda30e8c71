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
  /** CPU time of the program (runbox-init and what it runs, not the launcher); null when unavailable. */
  cpuNs: number | null;
  /** Peak memory of the program (tmpfs included, not the launcher); null when unavailable. */
  memoryPeakBytes: number | null;
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
