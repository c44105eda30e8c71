import { spawn } from 'node:child_process';
import { constants as FS } from 'node:fs';
import { closeSync, openSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';

// flock(2) locks that live exactly as long as this process (or a child handed the
// descriptor): the kernel drops them when the last descriptor of the open file goes,
// however the process ends, so a lock file left behind by a killed process is free.
//
// Node has no flock(), so util-linux's flock(1) takes it on our descriptor, passed as
// its fd 3: the lock belongs to the open file description both share, and stays with
// ours after flock(1) exits.

export interface HeldLock {
  readonly path: string;
  /** The descriptor to hand to a child that must keep the lock while it lives. */
  readonly fd: number;
  /** Drops the lock; with `remove`, unlinks the file first (while still holding it). */
  release(opts?: { remove?: boolean }): Promise<void>;
}

async function takeOn(fd: number, wait: boolean): Promise<boolean> {
  const child = spawn('flock', ['--exclusive', ...(wait ? ['--timeout', '30'] : ['--nonblock']), '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', (err) => reject(new Error(`flock(1) from util-linux is needed: ${err.message}`)));
    child.once('close', (c) => resolve(c));
  });
  if (code === 0) return true;
  if (code === 1 && !stderr) return false;
  throw new Error(`flock failed (exit ${code}): ${stderr.trim()}`);
}

/**
 * Takes an exclusive lock on `path` (created when missing). Without `wait`, null when
 * another process holds it; with `wait`, waits up to 30 s, then fails.
 */
export async function lockFile(path: string, opts: { wait?: boolean } = {}): Promise<HeldLock | null> {
  // A plain descriptor, not a FileHandle: a FileHandle nobody references is closed by
  // the garbage collector, which would drop the lock unnoticed. (libuv opens it close-on-exec.)
  const fd = openSync(path, FS.O_RDWR | FS.O_CREAT | FS.O_NOFOLLOW, 0o600);
  let held = false;
  try {
    held = await takeOn(fd, opts.wait === true);
  } finally {
    if (!held) closeSync(fd);
  }
  if (!held) {
    if (opts.wait) throw new Error(`${path} stayed locked for 30 s`);
    return null;
  }
  return {
    path,
    fd,
    release: async ({ remove = false } = {}) => {
      if (remove) await unlink(path).catch(() => {});
      closeSync(fd);
    },
  };
}

/** Writes `text` into a held lock file (who holds it, for the operator who finds it). */
export async function describeLock(lock: HeldLock, text: string): Promise<void> {
  const fh = await open(lock.path, FS.O_WRONLY | FS.O_TRUNC | FS.O_NOFOLLOW);
  try {
    await fh.writeFile(text);
  } finally {
    await fh.close();
  }
}
