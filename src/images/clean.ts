import { execa } from 'execa';
import { chmod, lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { IMAGE_MOUNT_POINTS } from '../sandbox/spec.js';
import { walkTree } from './tree.js';

// Turns a freshly bootstrapped tree into a sandbox image: nothing that grants privilege
// (setuid/setgid bits, device nodes), nothing a program does not need (documentation,
// manuals, translations, package caches), and every mount point the launchers need.

/** Removed with their contents and recreated empty where they are directories. */
const EMPTIED = [
  'dev',
  'proc',
  'sys',
  'tmp',
  'run',
  'var/tmp',
  'var/cache/apt',
  'var/cache/debconf',
  'var/lib/apt/lists',
  'var/log',
  'usr/share/doc',
  'usr/share/man',
  'usr/share/info',
  'usr/share/locale',
  'usr/share/lintian',
  'usr/share/linda',
];

export interface CleanReport {
  strippedSetid: string[];
  removedSpecial: string[];
  droppedCapabilities: string[];
}

/**
 * File capabilities (security.capability) grant privilege like a setuid bit does. The
 * launchers set no_new_privs, which ignores them, but an image should not carry them
 * at all. getcap/setcap come with libcap2-bin; without them nothing is checked (archives
 * never carry extended attributes, so imported images have none either way).
 */
async function dropFileCapabilities(root: string): Promise<string[]> {
  const listed = await execa('getcap', ['-r', root], { reject: false, stdin: 'ignore' });
  if (listed.failed && listed.exitCode === undefined) return [];
  const files = String(listed.stdout)
    .split('\n')
    .map((line) => /^(\/.*?)\s+(?:=\s*)?\S*cap_\S*/.exec(line)?.[1])
    .filter((f): f is string => f !== undefined && f.startsWith(`${root}/`));
  for (const file of files) await execa('setcap', ['-r', file]);
  return files.map((f) => f.slice(root.length + 1));
}

export async function cleanTree(root: string): Promise<CleanReport> {
  for (const rel of EMPTIED) {
    const path = join(root, rel);
    let st;
    try {
      st = await lstat(path);
    } catch {
      continue;
    }
    if (!st.isDirectory()) continue;
    for (const name of await readdir(path)) await rm(join(path, name), { recursive: true, force: true });
  }

  const report: CleanReport = { strippedSetid: [], removedSpecial: [], droppedCapabilities: await dropFileCapabilities(root) };
  const special: string[] = [];
  for await (const { path, stats } of walkTree(root)) {
    if (stats.isSymbolicLink()) continue;
    if (!stats.isFile() && !stats.isDirectory()) {
      special.push(path);
      continue;
    }
    if (stats.mode & 0o6000) {
      await chmod(join(root, path), stats.mode & 0o1777);
      report.strippedSetid.push(path);
    }
  }
  // Device nodes, fifos and sockets: /dev is mounted by the launcher, nothing else needs them.
  for (const path of special) await rm(join(root, path), { force: true });
  report.removedSpecial = special;

  for (const mount of IMAGE_MOUNT_POINTS) {
    const path = join(root, mount);
    await mkdir(path, { recursive: true, mode: 0o755 });
    // /tmp keeps its usual sticky, world-writable mode; the launcher mounts a tmpfs over it.
    await chmod(path, mount === '/tmp' ? 0o1777 : 0o755);
  }
  return report;
}

/** Problems that would make a tree unfit as an image; empty when it is fine. */
export async function auditTree(root: string): Promise<string[]> {
  const problems: string[] = [];
  for await (const { path, stats } of walkTree(root)) {
    if (stats.isSymbolicLink()) continue;
    if (!stats.isFile() && !stats.isDirectory()) problems.push(`${path}: special file`);
    else if (stats.mode & 0o6000) problems.push(`${path}: setuid/setgid`);
  }
  for (const mount of IMAGE_MOUNT_POINTS) {
    try {
      const st = await lstat(join(root, mount));
      if (!st.isDirectory()) problems.push(`${mount}: mount point is not a directory`);
      else if ((await readdir(join(root, mount))).length > 0) problems.push(`${mount}: mount point is not empty`);
    } catch {
      problems.push(`${mount}: mount point missing`);
    }
  }
  return problems;
}
