import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { lstat, mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { lockFile, type HeldLock } from '../util/flock.js';
import { mountsUnder } from './mounts.js';

// Work directories of builds and imports (<imagesDir>/.build-<image>-<id>,
// .import-<id>) belong to the process that made them for as long as it lives: each has
// a lock file beside it (<dir>.lock), locked before the directory exists and held until
// it is installed or removed. A build killed outright (SIGKILL, a crash, the host
// going down) cannot remove its own; the next build, or `image clean`, finds its lock
// free and removes the directory then.

/** Names of work directories (mkdtemp's random letters in those of older versions). */
const WORK_DIR = /^\.(build|import)-[A-Za-z0-9.+-]+$/;
const isWorkDir = (name: string) => WORK_DIR.test(name) && !name.endsWith('.lock');

export interface WorkDir {
  path: string;
  lock: HeldLock;
  /** Removes the lock file once the directory is installed (renamed away) or removed. */
  done(): Promise<void>;
}

/** Removes a work tree, refusing while anything is still mounted inside it. */
export async function removeWorkTree(path: string): Promise<void> {
  for (const point of mountsUnder(path)) {
    await execa('umount', ['-l', '--', point], { reject: false });
  }
  const left = mountsUnder(path);
  if (left.length) throw new Error(`not removing ${path}: still mounted inside it: ${left.join(', ')}`);
  await rm(path, { recursive: true, force: true });
}

/** A new work directory in imagesDir (same filesystem, so the install is a rename), owned by this process. */
export async function makeWorkDir(imagesDir: string, prefix: '.build-' | '.import-', image = ''): Promise<WorkDir> {
  await mkdir(imagesDir, { recursive: true, mode: 0o755 });
  const path = join(imagesDir, `${prefix}${image ? `${image}-` : ''}${randomBytes(6).toString('hex')}`);
  const lock = (await lockFile(`${path}.lock`))!;
  try {
    await mkdir(path, { mode: 0o700 });
  } catch (err) {
    await lock.release({ remove: true });
    throw err;
  }
  return { path, lock, done: () => lock.release({ remove: true }) };
}

/**
 * A directory without a lock file was made by a version before the lock files: whether
 * its process lives cannot be told, so it goes once nothing was written at its top for
 * a day (no build takes that long).
 */
const LOCKLESS_MAX_AGE_MS = 24 * 3600 * 1000;

async function abandonedLockless(path: string): Promise<boolean> {
  const times = await Promise.all([path, join(path, 'rootfs')].map((p) => lstat(p).then((st) => st.mtimeMs, () => 0)));
  return Date.now() - Math.max(...times) > LOCKLESS_MAX_AGE_MS;
}

/**
 * Removes the work directories (and lock files) of builds and imports whose process
 * is gone, leaving those of live ones alone. Returns what it removed.
 */
export async function removeStaleWorkDirs(imagesDir: string, log: (line: string) => void = () => {}): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(imagesDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  const dirs = new Set(names.filter(isWorkDir));
  // Lock files whose directory is already gone (killed between the two) go as well.
  for (const n of names) if (n.endsWith('.lock') && isWorkDir(n.slice(0, -5))) dirs.add(n.slice(0, -5));
  for (const name of [...dirs].sort()) {
    const path = join(imagesDir, name);
    if (!names.includes(`${name}.lock`) && !(await abandonedLockless(path))) continue;
    const lock = await lockFile(`${path}.lock`);
    if (!lock) continue; // its build or import is still running
    try {
      if (names.includes(name)) {
        await removeWorkTree(path);
        removed.push(name);
        log(`removed ${path}, left by a build or import that did not finish`);
      }
      await lock.release({ remove: true });
    } catch (err) {
      await lock.release();
      log(`could not remove ${path}: ${(err as Error).message}`);
    }
  }
  return removed;
}
