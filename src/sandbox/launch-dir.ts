import { mkdtempSync, readdirSync, rmSync, statSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockFile, type HeldLock } from '../util/flock.js';

// One directory per runner process for what its launchers read: nsjail's config files
// (root only) and the sandbox view (view.ts, read by bubblewrap as the slot's uid).
// It holds a lock file for the process's life, so a starting runner can tell the
// directories of runners that are gone (killed, crashed) and remove them.

const PREFIX = 'runbox-launch-';
const LOCK = 'lock';
/** Directories made before they carried a lock go once they are this old. */
const UNLOCKED_MAX_AGE_MS = 24 * 3600_000;

let dir: string | null = null;
let opening: Promise<string> | null = null;
let held: HeldLock | null = null;

/** This process's launch directory, made (and stale ones of dead runners removed) on first call. */
export function openLaunchDir(parent: string = tmpdir()): Promise<string> {
  opening ??= (async () => {
    await sweepStaleLaunchDirs(parent);
    const made = mkdtempSync(join(parent, PREFIX));
    // Traversable but not listable: the view below it is read by the slots' uids.
    chmodSync(made, 0o711);
    held = await lockFile(join(made, LOCK));
    if (!held) throw new Error(`${made}: could not lock a directory just made`);
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
    dir = made;
    return made;
  })().catch((e: unknown) => {
    opening = null;
    throw e;
  });
  return opening;
}

/** The launch directory; openLaunchDir must have settled first. */
export function launchDir(): string {
  if (!dir) throw new Error('the launch directory is not open yet (openLaunchDir)');
  return dir;
}

/** Removes launch directories whose runner is gone; returns their paths. */
export async function sweepStaleLaunchDirs(parent: string = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(PREFIX));
  } catch {
    return removed;
  }
  for (const name of names) {
    const path = join(parent, name);
    if (path === dir) continue;
    let stale: boolean;
    try {
      const hasLock = readdirSync(path).includes(LOCK);
      if (hasLock) {
        // Free only when no process holds it: its runner is gone.
        const lock = await lockFile(join(path, LOCK));
        stale = lock !== null;
        await lock?.release();
      } else {
        stale = Date.now() - statSync(path).mtimeMs > UNLOCKED_MAX_AGE_MS;
      }
    } catch {
      continue; // removed meanwhile, or not ours to read
    }
    if (stale) {
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    }
  }
  return removed;
}
