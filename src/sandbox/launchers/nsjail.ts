import { join } from 'node:path';
import { SANDBOX_LAYOUT } from '../spec.js';
import { checkRootfs, initArgv, type LaunchPlan, type LaunchRequest } from './common.js';
import { DEV_LINKS, DEV_NODES, devptsOptions, procMasks } from './world.js';

// nsjail, run as root: it builds the namespaces and mounts, then drops to the slot's
// uid itself. No user namespace: ids inside are the host's ids, so the tmpfs owners
// below are real. Memory, tasks and CPU are the job cgroup's job, never nsjail's; the
// rlimits are set by the fork server's child before the exec, as under bubblewrap.
//
// Everything goes in a config file (protobuf text) written for each run: only there
// can a mount carry nosuid/nodev/noexec, so every mount has bubblewrap's flags.

/** nsjail itself and runbox-init (PID 1 inside, so the program is not). */
export const NSJAIL_FIXED_PROCESSES = 2;
/** runbox-init reads the stage archive on 3 and reports on 4. */
const PASSED_FDS = [3, 4];
/** nsjail's own log goes here, away from the program's stderr. */
export const NSJAIL_LOG_FD = 5;

/** A protobuf text-format string literal: printable ASCII as is, every other byte (of
 *  the UTF-8 encoding) as an octal escape. */
export function protoString(s: string): string {
  let out = '"';
  for (const b of Buffer.from(s, 'utf8')) {
    if (b === 0x22 || b === 0x5c) out += `\\${String.fromCharCode(b)}`;
    else if (b >= 0x20 && b < 0x7f) out += String.fromCharCode(b);
    else out += `\\${b.toString(8).padStart(3, '0')}`;
  }
  return `${out}"`;
}

/** An enum value, written bare. */
export class ProtoEnum {
  constructor(readonly name: string) {}
}

type Value = string | number | boolean | ProtoEnum | Message | Value[];
interface Message {
  [field: string]: Value | undefined;
}

/** Protobuf text format of `msg`: arrays become repeated fields. */
export function protoText(msg: Message, indent = ''): string {
  const lines: string[] = [];
  const one = (k: string, v: Value): void => {
    if (Array.isArray(v)) return v.forEach((x) => one(k, x));
    if (v instanceof ProtoEnum) lines.push(`${indent}${k}: ${v.name}`);
    else if (typeof v === 'object') lines.push(`${indent}${k} {\n${protoText(v, `${indent}  `)}${indent}}`);
    else if (typeof v === 'string') lines.push(`${indent}${k}: ${protoString(v)}`);
    else lines.push(`${indent}${k}: ${v}`);
  };
  for (const [k, v] of Object.entries(msg)) if (v !== undefined) one(k, v);
  return lines.map((l) => `${l}\n`).join('');
}

interface Mount extends Message {
  dst: string;
}

/** The mounts, in order, with bubblewrap's flags for each kind. */
export function nsjailMounts(req: LaunchRequest): Mount[] {
  const { spec, limits, uid, gid } = req;
  const owner = `mode=755,uid=${uid},gid=${gid}`;
  // Sources named as bubblewrap names them (mountinfo shows them).
  const tmpfs = (dst: string, options: string, rw = true): Mount => ({ src: 'tmpfs', dst, fstype: 'tmpfs', options, rw, nosuid: true, nodev: true });
  const roBind = (src: string, dst: string): Mount => ({ src, dst, is_bind: true, rw: false, nosuid: true, nodev: true });
  const masks = procMasks();
  return [
    { ...roBind(checkRootfs(spec.rootfs), '/'), is_dir: true },
    { src: 'proc', dst: '/proc', fstype: 'proc', rw: true, nosuid: true, nodev: true, noexec: true },
    ...masks.files.map((f) => ({ ...roBind('/dev/null', f), is_dir: false })),
    ...masks.dirs.map((d) => tmpfs(d, owner, false)),
    ...(req.view?.procFiles ?? []).map(([inside, host]) => ({ ...roBind(host, inside), is_dir: false })),
    ...(req.view ? [{ ...roBind(req.view.sys, '/sys'), is_dir: true }] : []),
    tmpfs('/dev', owner, false),
    ...DEV_NODES.map((n): Mount => ({ src: `/dev/${n}`, dst: `/dev/${n}`, is_bind: true, rw: true, nosuid: true, is_dir: false })),
    { src: 'devpts', dst: '/dev/pts', fstype: 'devpts', options: devptsOptions(limits.terminals), rw: true, nosuid: true, noexec: true, is_dir: true },
    ...DEV_LINKS.map(([name, target]): Mount => ({ src: target, dst: `/dev/${name}`, is_symlink: true })),
    tmpfs('/dev/shm', `size=${limits.shmBytes},${owner}`),
    tmpfs(SANDBOX_LAYOUT.workspace, `size=${limits.workspaceBytes},${owner}`),
    tmpfs(SANDBOX_LAYOUT.tmp, `size=${limits.tmpBytes},${owner}`),
    { ...roBind(req.helpersDir, SANDBOX_LAYOUT.helpers), is_dir: true },
  ];
}

/** The nsjail config (protobuf text) for one run. */
export function nsjailConfig(req: LaunchRequest): string {
  const { uid, gid } = req;
  // A pooled init mounts each stage's devpts itself, with the same options.
  const [path, ...args] = initArgv(req, req.pool ? { devpts: devptsOptions(req.limits.terminals), noUserNamespaces: true } : {});
  return protoText({
    name: 'runbox',
    mode: new ProtoEnum('ONCE'),
    hostname: 'runbox',
    cwd: SANDBOX_LAYOUT.workspace,
    time_limit: 0,
    // nsjail's default is 19; bubblewrap leaves the runner's 0.
    nice_level: 0,
    log_fd: NSJAIL_LOG_FD,
    log_level: new ProtoEnum('ERROR'),
    // No envar: runbox-init starts with an empty environment (keep_env is off) and
    // gives the program its own.
    pass_fd: [...PASSED_FDS, ...(req.programCgroupFds ?? [])],
    // The fork server's child has set the rlimits; nsjail must not replace them with its own defaults.
    disable_rl: true,
    ...(req.pool
      ? {
          // A pooled sandbox's init mounts each stage's /proc, tmpfs and devpts and brings
          // its loopback up: it needs these capabilities, confined to a user namespace of
          // the sandbox's own (the slot's ids mapped to themselves), until each stage drops
          // them all. The seccomp filter is then init's alone (it loads the same policy
          // for each stage's program): nsjail's would refuse init's mounts.
          clone_newuser: true,
          uidmap: { inside_id: String(uid), outside_id: String(uid) },
          gidmap: { inside_id: String(gid), outside_id: String(gid) },
          cap: ['CAP_SYS_ADMIN', 'CAP_SYS_RESOURCE', 'CAP_SETPCAP', 'CAP_NET_ADMIN'],
        }
      : {
          clone_newuser: false,
          uidmap: { inside_id: String(uid) },
          gidmap: { inside_id: String(gid) },
        }),
    mount_proc: false,
    mount: nsjailMounts(req),
    ...(req.pool ? {} : { seccomp_policy_file: join(req.helpersDir, 'seccomp.kafel') }),
    exec_bin: { path: path!, arg: args },
  });
}

export function nsjailPlan(req: LaunchRequest): LaunchPlan {
  if (!req.configPath) throw new Error('nsjail needs a config file path');
  const argv = [req.launcherPath, '--config', req.configPath];
  // A pooled sandbox is made in a user namespace of its own, which nsjail can make as the
  // slot's user, as bubblewrap does: the namespace then denies setgroups, as bubblewrap's
  // does (nsjail leaves it allowed when it runs as root).
  return { argv, dropPrivileges: req.pool === true, fixedProcesses: NSJAIL_FIXED_PROCESSES, configText: nsjailConfig(req) };
}
