import { lstat, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { runInImage } from './probe.js';

// A recipe's `links`: symbolic links added to a built tree where programs written for
// another service look for a toolchain (Judge0's /usr/local/gcc-9.2.0/bin/g++). The tree
// is on the build host, whose paths its absolute symlinks would reach: so every
// directory on a link's way is a real directory of the tree (made when missing, never
// reached through a symlink), a link never replaces anything, and whether its target
// exists is asked inside the image, where the links resolve as programs will see them.

/** Real directories of the tree down to `dir` (a path in the image), made when missing. */
async function realDirs(rootfs: string, dir: string[]): Promise<void> {
  for (let i = 1; i <= dir.length; i++) {
    const path = join(rootfs, ...dir.slice(0, i));
    const st = await lstat(path).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    if (!st) await mkdir(path, { mode: 0o755 });
    else if (!st.isDirectory()) throw new Error(`/${dir.slice(0, i).join('/')} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}`);
  }
}

export async function addLinks(rootfs: string, links: Record<string, string>, log: (line: string) => void): Promise<void> {
  // Names sorted, so that a link made inside a directory the recipe also makes is refused the same way every time.
  for (const [path, target] of Object.entries(links).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const parts = path.split('/').slice(1);
    try {
      await realDirs(rootfs, parts.slice(0, -1));
      await symlink(target, join(rootfs, ...parts));
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code === 'EEXIST' ? 'something is already there' : (err as Error).message;
      throw new Error(`link ${path} -> ${target}: ${why}`);
    }
  }
  for (const [path, target] of Object.entries(links)) {
    const found = await runInImage(rootfs, ['/usr/bin/test', '-e', path]);
    if (found.exitCode !== 0) throw new Error(`link ${path} -> ${target}: the target is not in the image`);
  }
  log(`linked ${Object.keys(links).length} paths: ${Object.keys(links).join(', ')}`);
}
