import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { treeSize } from './tree.js';

// An image's size, walked once and kept beside its manifest (size.json, keyed by the
// manifest's digest), so `image list` never walks a whole tree of 5,000 to 100,000
// files per image again. A store directory holds one version of an image and never
// changes, so the record stays true; the digest key catches a tree replaced by hand.

const SIZE_FILE = 'size.json';

async function manifestDigest(dir: string): Promise<string | undefined> {
  try {
    return (JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { digest?: string }).digest;
  } catch {
    return undefined;
  }
}

/** Walks dir/rootfs and records its size in dir/size.json; returns the size. */
export async function recordImageSize(dir: string): Promise<number> {
  const bytes = await treeSize(join(dir, 'rootfs'));
  const digest = await manifestDigest(dir);
  // Best effort: a reader without write access (an operator not root) still gets the size.
  await writeFile(join(dir, SIZE_FILE), JSON.stringify({ digest, bytes }) + '\n', { mode: 0o644 }).catch(() => undefined);
  return bytes;
}

/** The recorded size of the image in dir, walking (and recording) it only when there is no record for this digest. */
export async function imageSize(dir: string, digest: string): Promise<number | undefined> {
  try {
    const record = JSON.parse(await readFile(join(dir, SIZE_FILE), 'utf8')) as { digest?: unknown; bytes?: unknown };
    if (record.digest === digest && typeof record.bytes === 'number' && Number.isSafeInteger(record.bytes)) return record.bytes;
  } catch {
    // No record yet (an image installed before records were kept): walk it once.
  }
  return recordImageSize(dir).catch(() => undefined);
}
