import { isCollectPath, type StageProgram } from '../archive.js';
import { BASE_ENV, SANDBOX_LAYOUT, type SandboxLimits, type SandboxSpec } from '../spec.js';
import type { SandboxView } from './view.js';

// What both launchers share: the request they turn into argv, the init command line,
// and the program that runbox-init is sent once the sandbox stands (its argv and
// environment are not the launcher's: a launcher starts before its run is known).

export interface LaunchRequest {
  spec: Pick<SandboxSpec, 'rootfs'>;
  limits: SandboxLimits;
  /** The slot's uid and gid (RUNBOX_SANDBOX_UID_BASE + slot). */
  uid: number;
  gid: number;
  /** native/build on the host, mounted read-only at SANDBOX_LAYOUT.helpers. */
  helpersDir: string;
  /** Absolute path of the launcher binary. */
  launcherPath: string;
  /** Where a launcher that takes a config file (nsjail) finds it: private to this run. */
  configPath?: string;
  /** Descriptors of the program's cgroup.procs files, which runbox-init joins first. */
  programCgroupFds?: number[];
  /** The CPUs the program runs on (cpus.ts); all of the host's when absent. */
  cpus?: number[];
  /** The machine the program is shown (view.ts); the host's /proc and an empty /sys when absent. */
  view?: SandboxView;
  /** A pooled sandbox: runbox-init stays and runs each stage in namespaces of its own
   *  (native/init/pool.c), with the capabilities that needs until each stage drops them. */
  pool?: boolean;
}

export interface LaunchPlan {
  /** argv[0] is the launcher's absolute path. */
  argv: string[];
  /** The fork server's child drops to the slot's uid/gid before exec (unprivileged launcher). */
  dropPrivileges: boolean;
  /** The launcher's own processes in the job cgroup, runbox-init included: not the program's. */
  fixedProcesses: number;
  /** Written to LaunchRequest.configPath before the launcher starts, removed after. */
  configText?: string;
}

export const INIT_PATH = `${SANDBOX_LAYOUT.helpers}/init`;

/** What runbox-init does itself, with the capabilities an unprivileged launcher leaves it
 *  in the sandbox's user namespace (then it drops them): mount the capped devpts, forbid
 *  user namespaces below the sandbox's. */
export interface InitDuties {
  /** devpts mount options (world.ts devptsOptions). */
  devpts?: string;
  noUserNamespaces?: boolean;
}

/** What a pooled runbox-init is told: the sizes of each stage's tmpfs mounts. */
export const poolArgs = (limits: SandboxLimits) => ['--pool', `${limits.workspaceBytes},${limits.tmpBytes},${limits.shmBytes}`];

/** runbox-init's command line inside the sandbox. */
export function initArgv(req: LaunchRequest, duties: InitDuties = {}): string[] {
  const out = [INIT_PATH];
  for (const fd of req.programCgroupFds ?? []) out.push('--cgroup-fd', String(fd));
  if (req.cpus && req.cpus.length > 0) out.push('--cpus', req.cpus.join(','));
  if (duties.devpts !== undefined) out.push('--devpts', duties.devpts);
  if (duties.noUserNamespaces) out.push('--no-user-namespaces');
  if (req.pool) out.push(...poolArgs(req.limits));
  return out;
}

/** What runbox-init runs: argv, BASE_ENV + spec.env, and the paths to bring back within their bounds. */
export function stageProgram(
  spec: Pick<SandboxSpec, 'argv' | 'env' | 'collect' | 'collectBounds'>,
  limits: Pick<SandboxLimits, 'collectBytes' | 'collectFiles'>,
): StageProgram {
  if (spec.argv.length === 0) throw new Error('empty argv');
  for (const name of spec.collect ?? []) {
    if (!isCollectPath(name)) throw new Error(`not a workspace path to collect: ${JSON.stringify(name)}`);
  }
  const bytes = Math.min(limits.collectBytes, spec.collectBounds?.bytes ?? Infinity);
  const files = Math.min(limits.collectFiles, spec.collectBounds?.files ?? Infinity);
  return { argv: spec.argv, env: sandboxEnv(spec), collect: spec.collect ?? [], collectMaxBytes: bytes, collectMaxFiles: files };
}

/** BASE_ENV + spec.env, checked: nothing of the runner's own environment passes. */
function sandboxEnv(spec: Pick<SandboxSpec, 'env'>): [string, string][] {
  const env = { ...BASE_ENV, ...spec.env };
  for (const [k, v] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || v.includes('\0')) throw new Error(`bad environment variable ${JSON.stringify(k)}`);
  }
  return Object.entries(env);
}

export function checkRootfs(rootfs: string): string {
  if (!rootfs.startsWith('/') || rootfs.split('/').includes('..')) throw new Error(`rootfs must be an absolute path: ${rootfs}`);
  return rootfs;
}
