import { randomBytes } from 'node:crypto';
import { lstat, mkdir, mkdtemp, readdir, readlink, rename, rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { assertImageName } from './recipes.js';
import { recordImageSize } from './size.js';

// The layout of the images directory, and installing an image atomically:
//
//   <imagesDir>/<image>            symlink -> .store/<image>@<id>
//   <imagesDir>/.store/<image>@<id>/rootfs, manifest.json
//   <imagesDir>/.build-<image>-<rand>, .import-<rand>   work in progress (work-dirs.ts)
//
// Readers open <imagesDir>/<image>/rootfs and <imagesDir>/<image>/manifest.json. A new
// version is switched in by renaming one symlink over the old one, so a reader sees
// either the old rootfs with the old manifest or the new with the new, never a mix or
// nothing. The replaced version is kept until the next install, so a run that started in
// it a moment before the switch does not lose its files.

const STORE = '.store';

/** A fresh private work directory inside imagesDir (same filesystem, so the install is a rename). */
export async function makeStaging(imagesDir: string, prefix: string): Promise<string> {
  await mkdir(imagesDir, { recursive: true, mode: 0o755 });
  return mkdtemp(join(imagesDir, prefix));
}

/** lstat, or null where nothing is at path. */
export async function lstatOrNull(path: string) {
  try {
    return await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Store directories of one image, by name. */
async function storesOf(imagesDir: string, image: string): Promise<string[]> {
  try {
    return (await readdir(join(imagesDir, STORE))).filter((n) => n.startsWith(`${image}@`));
  } catch {
    return [];
  }
}

/**
 * Installs a finished staging directory (holding rootfs/ and manifest.json) as `image`,
 * replacing any installed version. Returns the store path now in use.
 */
export async function installStaging(imagesDir: string, image: string, staging: string): Promise<string> {
  assertImageName(image);
  await mkdir(join(imagesDir, STORE), { recursive: true, mode: 0o755 });
  // Walked here once, so `image list` reads the size instead of walking the tree.
  await recordImageSize(staging).catch(() => undefined);
  const id = `${image}@${Date.now().toString(36)}-${randomBytes(4).toString('hex')}`;
  const storePath = join(imagesDir, STORE, id);
  await rename(staging, storePath);

  const linkPath = join(imagesDir, image);
  const current = await lstatOrNull(linkPath);
  let previous: string | undefined;
  if (current?.isSymbolicLink()) {
    previous = (await readlink(linkPath)).split('/').pop();
  } else if (current) {
    // An image installed by hand as a plain directory: move it into the store first.
    previous = `${image}@legacy-${randomBytes(4).toString('hex')}`;
    await rename(linkPath, join(imagesDir, STORE, previous));
  }
  const tmpLink = join(imagesDir, `.link-${image}-${randomBytes(6).toString('hex')}`);
  await symlink(`${STORE}/${id}`, tmpLink);
  await rename(tmpLink, linkPath);

  // Keep the version just replaced (runs may still be inside it); drop older ones.
  for (const name of await storesOf(imagesDir, image)) {
    if (name !== id && name !== previous) await rm(join(imagesDir, STORE, name), { recursive: true, force: true });
  }
  return storePath;
}

/** Removes an installed image and every stored version of it. Returns false when none was installed. */
export async function removeImage(imagesDir: string, image: string): Promise<boolean> {
  assertImageName(image);
  const linkPath = join(imagesDir, image);
  const current = await lstatOrNull(linkPath);
  if (current?.isSymbolicLink()) await rm(linkPath);
  else if (current) await rm(linkPath, { recursive: true, force: true });
  const stores = await storesOf(imagesDir, image);
  for (const name of stores) await rm(join(imagesDir, STORE, name), { recursive: true, force: true });
  return current !== null || stores.length > 0;
}

/** Names of installed images (entries of imagesDir that are not work or store directories). */
export async function installedImages(imagesDir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(imagesDir);
  } catch {
    return [];
  }
  return names.filter((n) => !n.startsWith('.')).sort();
}
