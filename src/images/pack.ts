import { execa } from 'execa';
import { createReadStream, createWriteStream } from 'node:fs';
import { readFile, readlink, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import type { Compression } from './archive.js';
import { parseManifest } from './manifest.js';
import { assertImageName } from './recipes.js';
import { walkTree } from './tree.js';

// `image pack`: one installed image (manifest.json + rootfs/) as a portable archive for
// runner hosts that do not build their own. Entries keep modes, owners, times, symlinks
// and hard links; importers re-check everything (import.ts).

export interface PackResult {
  image: string;
  file: string;
  compression: Compression;
  bytes: number;
  digest: string;
}

/** Writes the tar stream of an image directory (holding manifest.json and rootfs/). */
export async function writeImageTar(imageDir: string, out: tar.Pack): Promise<void> {
  const manifestText = await readFile(join(imageDir, 'manifest.json'));
  out.entry({ name: 'manifest.json', mode: 0o644, type: 'file' }, manifestText);
  const rootfs = join(imageDir, 'rootfs');
  const firstByInode = new Map<string, string>();
  for await (const { path, stats } of walkTree(rootfs)) {
    const name = path === '' ? 'rootfs' : `rootfs/${path}`;
    const base = { name, mode: stats.mode & 0o7777, uid: stats.uid, gid: stats.gid, mtime: stats.mtime };
    if (stats.isDirectory()) {
      out.entry({ ...base, type: 'directory' });
    } else if (stats.isSymbolicLink()) {
      out.entry({ ...base, type: 'symlink', linkname: await readlink(join(rootfs, path)) });
    } else if (stats.isFile()) {
      const key = `${stats.dev}:${stats.ino}`;
      const first = stats.nlink > 1 ? firstByInode.get(key) : undefined;
      if (first) {
        out.entry({ ...base, type: 'link', linkname: first });
        continue;
      }
      if (stats.nlink > 1) firstByInode.set(key, name);
      const entry = out.entry({ ...base, type: 'file', size: stats.size });
      await pipeline(createReadStream(join(rootfs, path)), entry);
    } else {
      throw new Error(`${name}: special file in an installed image; rebuild it`);
    }
  }
  out.finalize();
}

export async function packImage(imagesDir: string, image: string, file: string, compression: Compression): Promise<PackResult> {
  assertImageName(image);
  const imageDir = join(imagesDir, image);
  const manifest = parseManifest(await readFile(join(imageDir, 'manifest.json'), 'utf8').catch(() => {
    throw new Error(`image ${image} is not installed in ${imagesDir}`);
  }));
  const tmp = `${file}.partial`;
  const pack = tar.pack();
  const producing = writeImageTar(imageDir, pack).catch((err: Error) => {
    pack.destroy(err);
    throw err;
  });
  try {
    if (compression === 'zstd') {
      const child = execa('zstd', ['-q', '-f', '-T0', '-o', tmp], { stdin: 'pipe', stdout: 'ignore' });
      await Promise.all([producing, pipeline(pack, child.stdin), child]);
    } else {
      const sink = createWriteStream(tmp, { mode: 0o644 });
      await Promise.all([producing, compression === 'gzip' ? pipeline(pack, createGzip(), sink) : pipeline(pack, sink)]);
    }
    await rename(tmp, file);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  return { image, file, compression, bytes: (await stat(file)).size, digest: manifest.digest };
}
