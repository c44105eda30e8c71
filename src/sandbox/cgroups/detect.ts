import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { CgroupBackend } from './types.js';
import { CgroupV1, V1_CONTROLLERS, type V1Controller } from './v1.js';
import { CgroupV2, V2_CONTROLLERS } from './v2.js';

// Finds which cgroup layout this host has and where the runner's own cgroups are.
// Job cgroups are only ever created below those.

export interface CgroupMount {
  /** Path inside the cgroup filesystem that is mounted (usually "/"). */
  root: string;
  mountPoint: string;
  fsType: 'cgroup' | 'cgroup2';
  /** v1: the controllers of this hierarchy. */
  controllers: string[];
}

/** Cgroup mounts from /proc/self/mountinfo. */
export function parseMountInfo(text: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    const [left, right] = line.split(' - ');
    if (!left || !right) continue;
    const f = left.split(' ');
    const [fsType, , superOpts = ''] = right.split(' ');
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    const unescape = (s: string) => s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
    mounts.push({
      root: unescape(f[3] ?? '/'),
      mountPoint: unescape(f[4] ?? ''),
      fsType,
      controllers: fsType === 'cgroup' ? superOpts.split(',') : [],
    });
  }
  return mounts;
}

/** /proc/self/cgroup as controller → path ("" names the v2 hierarchy). */
export function parseProcCgroup(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === '0' && m[2] === '') out.set('', m[3]!);
    else for (const c of m[2]!.split(',')) if (c) out.set(c, m[3]!);
  }
  return out;
}

function dirOf(mount: CgroupMount, cgroupPath: string): string {
  const rel = relative(mount.root, cgroupPath);
  if (rel.startsWith('..')) throw new Error(`cgroup ${cgroupPath} is outside the mounted ${mount.root}`);
  return join(mount.mountPoint, rel);
}

async function hasControllers(dir: string, wanted: readonly string[]): Promise<boolean> {
  try {
    const have = (await readFile(join(dir, 'cgroup.controllers'), 'utf8')).trim().split(/\s+/);
    return wanted.every((c) => have.includes(c));
  } catch {
    return false;
  }
}

export interface DetectSources {
  mountInfo: string;
  procCgroup: string;
  pid: number;
}

/** Picks v2 when the unified hierarchy has the controllers we need, else v1. */
export async function detectCgroups(src?: DetectSources): Promise<CgroupBackend> {
  const s = src ?? {
    mountInfo: await readFile('/proc/self/mountinfo', 'utf8'),
    procCgroup: await readFile('/proc/self/cgroup', 'utf8'),
    pid: process.pid,
  };
  const mounts = parseMountInfo(s.mountInfo);
  const own = parseProcCgroup(s.procCgroup);

  const unified = mounts.find((m) => m.fsType === 'cgroup2');
  const ownV2 = own.get('');
  if (unified && ownV2 !== undefined) {
    const dir = dirOf(unified, ownV2);
    // After set-up the runner sits in <own>/runner: its own cgroup is the parent.
    const base = dir.endsWith('/runner') && (await hasControllers(join(dir, '..'), V2_CONTROLLERS)) ? join(dir, '..') : dir;
    if (await hasControllers(base, V2_CONTROLLERS)) return CgroupV2.setUp(base, s.pid);
  }

  const dirs = {} as Record<V1Controller, string>;
  for (const c of V1_CONTROLLERS) {
    const mount = mounts.find((m) => m.fsType === 'cgroup' && m.controllers.includes(c));
    const path = own.get(c);
    if (!mount || path === undefined) {
      throw new Error(`no usable cgroups: v2 lacks ${V2_CONTROLLERS.join('/')} and the v1 ${c} controller is not mounted`);
    }
    dirs[c] = dirOf(mount, path);
  }
  return new CgroupV1(dirs, s.pid);
}
