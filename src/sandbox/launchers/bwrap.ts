import { SANDBOX_LAYOUT } from '../spec.js';
import { checkRootfs, initArgv, type LaunchPlan, type LaunchRequest } from './common.js';
import { procMasks } from './world.js';

// bubblewrap (Debian 0.8), run unprivileged: the fork server's child has dropped to the slot's
// uid, and bwrap maps that same uid inside a new user namespace. Its `--dev` makes the
// /dev that world.ts describes (and nsjail copies).

/** bwrap's outer process and runbox-init (PID 1 inside, so the program is not). */
export const BWRAP_FIXED_PROCESSES = 2;

export function bwrapPlan(req: LaunchRequest): LaunchPlan {
  const { spec, limits } = req;
  const argv = [
    req.launcherPath,
    '--unshare-user',
    '--uid', String(req.uid),
    '--gid', String(req.gid),
    '--unshare-pid',
    // runbox-init is PID 1: bwrap's own reaper would outlive the outer process and
    // linger as an orphan; init already reaps and kills everything the program leaves.
    '--as-pid-1',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    '--hostname', 'runbox',
    // runbox-init gets an empty environment and gives the program its own.
    '--clearenv',
  ];
  argv.push('--ro-bind', checkRootfs(spec.rootfs), '/', '--proc', '/proc');
  const masks = procMasks();
  for (const f of masks.files) argv.push('--ro-bind', '/dev/null', f);
  for (const d of masks.dirs) argv.push('--tmpfs', d, '--remount-ro', d);
  argv.push(
    '--dev', '/dev',
    // --size applies to the --tmpfs right after it. /dev itself is read-only: only
    // /dev/shm (and the workspace and /tmp) can be written, each within its size.
    '--size', String(limits.shmBytes), '--tmpfs', '/dev/shm',
    '--remount-ro', '/dev',
    '--size', String(limits.workspaceBytes), '--tmpfs', SANDBOX_LAYOUT.workspace,
    '--size', String(limits.tmpBytes), '--tmpfs', SANDBOX_LAYOUT.tmp,
    '--ro-bind', req.helpersDir, SANDBOX_LAYOUT.helpers,
    '--chdir', SANDBOX_LAYOUT.workspace,
    '--',
    ...initArgv(req),
  );
  return { argv, dropPrivileges: true, fixedProcesses: BWRAP_FIXED_PROCESSES };
}
