import { join } from 'node:path';
import { SANDBOX_LAYOUT } from '../spec.js';
import { checkRootfs, initArgv, sandboxEnv, type LaunchPlan, type LaunchRequest } from './common.js';

// nsjail, run as root: it builds the namespaces and mounts, then drops to the slot's
// uid itself. No user namespace: ids inside are the host's ids, so the tmpfs owners
// below are real. Memory, tasks and CPU are the job cgroup's job, never nsjail's.

/** nsjail itself and runbox-init (PID 1 inside, so the program is not). */
export const NSJAIL_FIXED_PROCESSES = 2;
/** runbox-init reads the stage archive on 3 and reports on 4. */
const PASSED_FDS = [3, 4];
/** nsjail's own log goes here, away from the program's stderr. */
export const NSJAIL_LOG_FD = 5;
const MiB = 1024 * 1024;

/** Device nodes bound from the host into the sandbox's own /dev. */
const DEVICES = ['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom'];

export function nsjailPlan(req: LaunchRequest): LaunchPlan {
  const { spec, limits, uid, gid } = req;
  const owner = `uid=${uid},gid=${gid},mode=0700`;
  const argv = [
    req.launcherPath,
    '--mode', 'o',
    '--quiet',
    '--log_fd', String(NSJAIL_LOG_FD),
    '--chroot', checkRootfs(spec.rootfs),
    '--disable_clone_newuser',
    '--user', String(uid),
    '--group', String(gid),
    '--hostname', 'runbox',
    '--cwd', SANDBOX_LAYOUT.workspace,
    '--time_limit', '0',
    '--rlimit_as', 'inf',
    '--rlimit_cpu', String(limits.cpuTimeRlimitSeconds),
    // nsjail takes the file-size rlimit in MiB.
    '--rlimit_fsize', String(Math.ceil(limits.fileSizeBytes / MiB)),
    '--rlimit_nofile', String(limits.openFiles),
    '--rlimit_nproc', 'soft',
    '--rlimit_stack', 'soft',
    '--rlimit_core', '0',
    '--seccomp_policy', join(req.helpersDir, 'seccomp.kafel'),
    '--mount', `none:${SANDBOX_LAYOUT.workspace}:tmpfs:size=${limits.workspaceBytes},${owner}`,
    '--mount', `none:${SANDBOX_LAYOUT.tmp}:tmpfs:size=${limits.tmpBytes},${owner}`,
    '--mount', 'none:/dev:tmpfs:size=65536,mode=0755',
    // POSIX shared memory (sem_open, shm_open) lives here; private to this sandbox.
    '--mount', `none:/dev/shm:tmpfs:size=${limits.tmpBytes},${owner}`,
  ];
  for (const d of DEVICES) argv.push('--bindmount', `${d}:${d}`);
  argv.push('--bindmount_ro', `${req.helpersDir}:${SANDBOX_LAYOUT.helpers}`);
  for (const fd of PASSED_FDS) argv.push('--pass_fd', String(fd));
  for (const [k, v] of sandboxEnv(spec)) argv.push('--env', `${k}=${v}`);
  argv.push('--', ...initArgv(req));
  return { argv, dropPrivileges: false, fixedProcesses: NSJAIL_FIXED_PROCESSES };
}
