import { SANDBOX_LAYOUT } from '../spec.js';
import { checkRootfs, initArgv, type LaunchPlan, type LaunchRequest } from './common.js';
import { DEV_LINKS, DEV_NODES, devptsOptions, procMasks } from './world.js';

// bubblewrap (Debian 0.8), run unprivileged: the fork server's child has dropped to the slot's
// uid, and bwrap maps that same uid inside a new user namespace. /dev is the one that
// world.ts describes (and nsjail builds too).

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
    '--die-with-parent',
    '--new-session',
    '--cap-drop', 'ALL',
    // For runbox-init alone, inside the sandbox's user namespace: it mounts /dev/pts with
    // its cap on terminals and forbids user namespaces below the sandbox's, then drops
    // every capability before anything of the program's runs. (bwrap's own --dev and
    // --disable-userns would each put the sandbox in a second, nested user namespace,
    // where runbox-init could do neither.)
    '--cap-add', 'CAP_SYS_ADMIN',
    '--cap-add', 'CAP_SYS_RESOURCE',
    '--cap-add', 'CAP_SETPCAP',
    // A pooled sandbox's init brings up each stage's own loopback.
    ...(req.pool ? ['--cap-add', 'CAP_NET_ADMIN'] : []),
    '--hostname', 'runbox',
    // runbox-init gets an empty environment and gives the program its own.
    '--clearenv',
  ];
  argv.push('--ro-bind', checkRootfs(spec.rootfs), '/', '--proc', '/proc');
  const masks = procMasks();
  for (const f of masks.files) argv.push('--ro-bind', '/dev/null', f);
  for (const d of masks.dirs) argv.push('--tmpfs', d, '--remount-ro', d);
  for (const [inside, host] of req.view?.procFiles ?? []) argv.push('--ro-bind', host, inside);
  if (req.view) argv.push('--ro-bind', req.view.sys, '/sys');
  // /dev as world.ts describes it, built here rather than with --dev: bwrap's --dev runs
  // the sandbox in a second, nested user namespace (to mount its devpts), where runbox-init
  // could not mount the sandbox's own capped devpts; runbox-init mounts it at /dev/pts.
  argv.push('--tmpfs', '/dev');
  for (const n of DEV_NODES) argv.push('--dev-bind', `/dev/${n}`, `/dev/${n}`);
  for (const [name, target] of DEV_LINKS) argv.push('--symlink', target, `/dev/${name}`);
  argv.push(
    '--dir', '/dev/pts',
    // --size applies to the --tmpfs right after it. /dev itself is read-only: only
    // /dev/shm (and the workspace and /tmp) can be written, each within its size.
    '--size', String(limits.shmBytes), '--tmpfs', '/dev/shm',
    '--remount-ro', '/dev',
    '--size', String(limits.workspaceBytes), '--tmpfs', SANDBOX_LAYOUT.workspace,
    '--size', String(limits.tmpBytes), '--tmpfs', SANDBOX_LAYOUT.tmp,
    '--ro-bind', req.helpersDir, SANDBOX_LAYOUT.helpers,
    '--chdir', SANDBOX_LAYOUT.workspace,
    '--',
    ...initArgv(req, { devpts: devptsOptions(limits.terminals), noUserNamespaces: true }),
  );
  return { argv, dropPrivileges: true, fixedProcesses: BWRAP_FIXED_PROCESSES };
}
