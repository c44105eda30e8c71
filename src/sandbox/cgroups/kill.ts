import { readdirSync, readFileSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';
import { join } from 'node:path';

// Shared by both back ends: reading a cgroup.procs file and killing its members.
// Cgroup files are small kernel-generated texts: they are read synchronously, which
// costs microseconds, where a thread-pool round trip costs milliseconds on a busy host.

export function readPids(procsFile: string): number[] {
  let text: string;
  try {
    text = readFileSync(procsFile, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const pids = new Set<number>();
  for (const line of text.split('\n')) {
    const n = Number(line);
    if (line !== '' && Number.isInteger(n) && n > 0) pids.add(n);
  }
  return [...pids];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGKILLs every process listed until the list stays empty (forks race the kills).
 *  `spare` (the launcher, the runner's own child) is left to exit by itself once the
 *  rest is gone: killed first, it would orphan its namespace's PID 1, which would then
 *  linger as a zombie of the host's init. */
export async function killUntilEmpty(procsFile: string, spare?: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pids = readPids(procsFile).filter((p) => p !== spare);
    if (pids.length === 0) return;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (Date.now() > deadline) throw new Error(`processes survive in ${procsFile}: ${pids.join(' ')}`);
    await sleep(2);
  }
}

/** rmdir, retrying while the kernel still holds the last exiting tasks. Asynchronous:
 *  the kernel may take milliseconds to release a v1 cgroup, and the runner's event loop
 *  must not stall on it (the removal runs off the outcome's path, see run.ts). */
export async function removeDir(dir: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await rmdir(dir);
      return;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || Date.now() > deadline) throw e;
      await sleep(5);
    }
  }
}

/** Whether `pid` names a live process on this host. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const JOB_NAME = /^job-(\d+)-\d+$/;

/** Kills and removes job cgroups under `parents` whose runner process is gone (a crash). */
export async function sweepStaleJobs(parents: readonly string[], ownPid: number): Promise<string[]> {
  const swept: string[] = [];
  for (const parent of parents) {
    let entries: string[];
    try {
      entries = readdirSync(parent);
    } catch {
      continue;
    }
    for (const e of entries) {
      const m = JOB_NAME.exec(e);
      if (!m || Number(m[1]) === ownPid || isAlive(Number(m[1]))) continue;
      const dir = join(parent, e);
      try {
        // The program's cgroup below the job goes first (rmdir needs an empty job).
        const below = readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => join(dir, d.name));
        for (const d of [...below, dir]) await killUntilEmpty(join(d, 'cgroup.procs'));
        for (const d of [...below, dir]) await removeDir(d);
        swept.push(dir);
      } catch {
        // Best effort: another process on this host may be sweeping the same cgroup, or the
        // kernel may still be releasing it. A leftover costs nothing but a directory and is
        // retried at the next start; refusing to start over it would cost the host a runner.
      }
    }
  }
  return swept;
}
