import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';

// Walking an image tree without ever following a symlink, and the digest that
// identifies its content: the same tree gives the same digest on the build host and
// after pack/import on a runner host.

export interface TreeEntry {
  /** Relative to the tree root, '/'-separated, no leading slash; '' is the root itself. */
  path: string;
  stats: Stats;
}

/** Every entry below root (root itself first), parents before children, names sorted. */
export async function* walkTree(root: string): AsyncGenerator<TreeEntry> {
  const stats = await lstat(root);
  yield { path: '', stats };
  if (stats.isDirectory()) yield* walkDir(root, '');
}

async function* walkDir(root: string, rel: string): AsyncGenerator<TreeEntry> {
  const names = (await readdir(join(root, rel))).sort();
  for (const name of names) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const stats = await lstat(join(root, path));
    yield { path, stats };
    if (stats.isDirectory()) yield* walkDir(root, path);
  }
}

function typeLetter(s: Stats): string {
  if (s.isFile()) return 'f';
  if (s.isDirectory()) return 'd';
  if (s.isSymbolicLink()) return 'l';
  return 'x';
}

async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * sha256 over the tree's sorted paths, types, permission bits and contents (file bytes,
 * symlink targets). Owners and times are left out: they do not change what a program
 * sees, and they are the first thing a copy loses.
 */
export async function treeDigest(root: string): Promise<string> {
  const digest = createHash('sha256');
  for await (const { path, stats } of walkTree(root)) {
    const type = typeLetter(stats);
    if (type === 'x') throw new Error(`${path}: special file in an image tree`);
    let content = '';
    if (type === 'f') content = await fileSha256(join(root, path));
    else if (type === 'l') content = await readlink(join(root, path));
    digest.update(`${type} ${(stats.mode & 0o7777).toString(8)} ${JSON.stringify(path)} ${JSON.stringify(content)}\n`);
  }
  return digest.digest('hex');
}

/** Bytes used by the tree's files (each hard-linked file once). */
export async function treeSize(root: string): Promise<number> {
  let bytes = 0;
  const seen = new Set<string>();
  for await (const { stats } of walkTree(root)) {
    if (stats.nlink > 1 && !stats.isDirectory()) {
      const key = `${stats.dev}:${stats.ino}`;
      if (seen.has(key)) continue;
      seen.add(key);
    }
    bytes += stats.isDirectory() ? 0 : stats.size;
  }
  return bytes;
}
