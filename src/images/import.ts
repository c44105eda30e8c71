import { constants as FS } from 'node:fs';
import { chmod, lchown, link, mkdir, open, readFile, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import type { ImageManifest } from '../compilers/availability.js';
import type { Config } from '../config.js';
import { openArchive } from './archive.js';
import { auditTree } from './clean.js';
import { parseManifest } from './manifest.js';
import { installStaging, lstatOrNull } from './store.js';
import { treeDigest } from './tree.js';
import { makeWorkDir, removeWorkTree } from './work-dirs.js';

// `image import`: unpacks an archive from elsewhere into a private work directory and
// installs it only when every entry is safe and the tree matches the manifest's digest.
//
// An image is full of absolute symlinks (/usr/bin/python3 -> /etc/alternatives/…). They
// are fine inside the sandbox, where the image is the root, and dangerous on the host,
// where they point at the host's files. So symlinks are kept but never followed here:
// every path is created component by component with lstat checks, files are opened
// O_CREAT|O_EXCL|O_NOFOLLOW, and an entry whose parent is a symlink is refused.

export class ImportRefused extends Error {}

/**
 * What one archive may unpack to. A small compressed archive can expand without bound
 * (a bomb); it is refused at the first entry over either cap, before that entry is
 * written, and its work directory removed.
 */
export interface ImportCaps {
  /** Sum of the regular files' sizes. */
  maxUnpackedBytes: number;
  /** Entries of every kind. */
  maxEntries: number;
}

/** The caps from RUNBOX_IMAGE_IMPORT_MAX_MB and RUNBOX_IMAGE_IMPORT_MAX_ENTRIES. */
export function importCaps(config: Pick<Config, 'RUNBOX_IMAGE_IMPORT_MAX_MB' | 'RUNBOX_IMAGE_IMPORT_MAX_ENTRIES'>): ImportCaps {
  return { maxUnpackedBytes: config.RUNBOX_IMAGE_IMPORT_MAX_MB * 1024 * 1024, maxEntries: config.RUNBOX_IMAGE_IMPORT_MAX_ENTRIES };
}

/** Debian's first ordinary user and group id (adduser.conf FIRST_UID). */
const FIRST_ORDINARY_ID = 1000;

const refuse = (name: string, why: string): never => {
  throw new ImportRefused(`refused ${JSON.stringify(name)}: ${why}`);
};

/** An entry name as path components below the archive root, or a refusal. */
export function entryComponents(name: string): string[] {
  if (name.includes('\0')) refuse(name, 'NUL in name');
  if (name.startsWith('/')) refuse(name, 'absolute path');
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) refuse(name, "'..' component leaves the image");
  if (parts.length === 0) refuse(name, 'empty name');
  const top = parts[0];
  if (!(top === 'rootfs' || (top === 'manifest.json' && parts.length === 1))) refuse(name, 'only manifest.json and rootfs/ may be in an image archive');
  return parts;
}

/**
 * Whether a symlink target stays inside the image. Absolute targets are resolved
 * against the image root, so they always do; relative ones are resolved from the
 * link's directory and must not climb above the root.
 */
export function symlinkStaysInside(linkDirInImage: string[], target: string): boolean {
  if (target.startsWith('/')) return true;
  const stack = [...linkDirInImage];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (stack.length === 0) return false;
      stack.pop();
    } else {
      stack.push(part);
    }
  }
  return true;
}

/** Makes sure every parent of parts is a real directory below root (creating missing ones). */
async function realParents(root: string, parts: string[], name: string, create: boolean): Promise<void> {
  let cur = root;
  for (const part of parts.slice(0, -1)) {
    cur = join(cur, part);
    const st = await lstatOrNull(cur);
    if (st === null) {
      if (!create) refuse(name, `parent ${part} does not exist`);
      await mkdir(cur, { mode: 0o755 });
    } else if (st.isSymbolicLink()) {
      refuse(name, `parent path traverses a symlink (${parts.slice(0, parts.indexOf(part) + 1).join('/')})`);
    } else if (!st.isDirectory()) {
      refuse(name, `parent ${part} is not a directory`);
    }
  }
}

async function writeFileNoFollow(path: string, mode: number, data: AsyncIterable<Uint8Array>): Promise<void> {
  // O_EXCL fails on anything already there, a symlink included; O_NOFOLLOW is belt and braces.
  const fh = await open(path, FS.O_WRONLY | FS.O_CREAT | FS.O_EXCL | FS.O_NOFOLLOW, 0o600);
  try {
    for await (const chunk of data) await fh.write(chunk);
    await fh.chmod(mode);
  } finally {
    await fh.close();
  }
}

/** An entry's content stream as tar-stream hands it over. */
type EntryData = AsyncIterable<Uint8Array> & { resume(): unknown };

async function extractEntry(root: string, header: tar.Header, data: EntryData): Promise<void> {
  const name = header.name;
  const parts = entryComponents(name);
  const mode = (header.mode ?? 0o644) & 0o7777;
  if (mode & 0o6000) refuse(name, 'setuid/setgid bits are never allowed in an image');
  // Images hold files of root and Debian's system accounts only; a file owned by an
  // ordinary id could belong to a sandbox user on this host.
  for (const id of [header.uid ?? 0, header.gid ?? 0]) if (!(id < FIRST_ORDINARY_ID)) refuse(name, `owner id ${id} is not a system account`);
  const type = header.type ?? 'file';
  if (!['file', 'directory', 'symlink', 'link'].includes(type)) refuse(name, `${type} entries are not allowed (devices and fifos come from the launcher)`);
  if (parts[0] === 'manifest.json' && type !== 'file') refuse(name, 'manifest.json must be a regular file');

  await realParents(root, parts, name, true);
  const path = join(root, ...parts);
  const existing = await lstatOrNull(path);
  if (existing && !(type === 'directory' && existing.isDirectory())) refuse(name, 'duplicate entry (an entry never replaces another)');
  const owner = async () => lchown(path, header.uid ?? 0, header.gid ?? 0);

  switch (type) {
    case 'directory':
      if (!existing) await mkdir(path, { mode: 0o700 });
      await chmod(path, mode);
      await owner();
      break;
    case 'file':
      await writeFileNoFollow(path, mode, data);
      await owner();
      return;
    case 'symlink': {
      const target = header.linkname ?? '';
      if (target === '' || target.includes('\0')) refuse(name, 'empty symlink target');
      if (parts.length < 2) refuse(name, 'symlink outside rootfs/');
      if (!symlinkStaysInside(parts.slice(1, -1), target)) refuse(name, `symlink target ${JSON.stringify(target)} leaves the image`);
      await symlink(target, path);
      await owner();
      break;
    }
    case 'link': {
      const targetParts = entryComponents(header.linkname ?? '');
      if (targetParts[0] !== 'rootfs' || parts[0] !== 'rootfs') refuse(name, 'hard links may only join files inside rootfs/');
      await realParents(root, targetParts, name, false);
      const source = join(root, ...targetParts);
      const st = await lstatOrNull(source);
      if (!st?.isFile()) refuse(name, `hard link target ${JSON.stringify(header.linkname)} is not a file already in the archive`);
      await link(source, path);
      break;
    }
  }
  data.resume();
}

export interface ImportResult {
  image: string;
  digest: string;
  compilers: ImageManifest['compilers'];
  entries: number;
}

/** Unpacks and checks an archive into a new directory under imagesDir; the caller installs or removes it. */
export async function unpackChecked(file: string, staging: string, caps: ImportCaps): Promise<{ manifest: ImageManifest; entries: number }> {
  const source = await openArchive(file);
  const extract = tar.extract();
  const feeding = pipeline(source.stream, extract).catch((err: Error) => err);
  let entries = 0;
  let bytes = 0;
  try {
    for await (const entry of extract) {
      const header = entry.header;
      if (entries + 1 > caps.maxEntries) throw new ImportRefused(`the archive has more than ${caps.maxEntries} entries (RUNBOX_IMAGE_IMPORT_MAX_ENTRIES)`);
      bytes += (header.type ?? 'file') === 'file' ? (header.size ?? 0) : 0;
      if (bytes > caps.maxUnpackedBytes) {
        throw new ImportRefused(
          `the archive unpacks to more than ${Math.floor(caps.maxUnpackedBytes / 1024 / 1024)} MiB (RUNBOX_IMAGE_IMPORT_MAX_MB), at ${JSON.stringify(header.name)}`,
        );
      }
      await extractEntry(staging, header, entry as unknown as EntryData);
      entries++;
    }
  } catch (err) {
    source.stop();
    extract.destroy();
    await feeding;
    await source.done().catch(() => {});
    if (err instanceof ImportRefused) throw err;
    throw new ImportRefused(`the archive is unreadable: ${(err as Error).message}`);
  }
  const fed = await feeding;
  if (fed instanceof Error) throw new ImportRefused(`the archive is unreadable: ${fed.message}`);
  await source.done().catch((err: Error) => {
    throw new ImportRefused(err.message);
  });

  const manifestStat = await lstatOrNull(join(staging, 'manifest.json'));
  if (!manifestStat?.isFile()) throw new ImportRefused('the archive has no manifest.json');
  let manifest: ImageManifest;
  try {
    manifest = parseManifest(await readFile(join(staging, 'manifest.json'), 'utf8'));
  } catch (err) {
    throw new ImportRefused((err as Error).message);
  }
  const rootfsStat = await lstatOrNull(join(staging, 'rootfs'));
  if (!rootfsStat?.isDirectory()) throw new ImportRefused('the archive has no rootfs/ directory');
  const problems = await auditTree(join(staging, 'rootfs'));
  if (problems.length) throw new ImportRefused(`the image is unfit: ${problems.slice(0, 10).join('; ')}`);
  const digest = await treeDigest(join(staging, 'rootfs'));
  if (digest !== manifest.digest) {
    throw new ImportRefused(`digest mismatch: manifest says ${manifest.digest}, the unpacked tree is ${digest} (corrupted or altered archive)`);
  }
  return { manifest, entries };
}

export async function importImage(file: string, imagesDir: string, caps: ImportCaps, log: (line: string) => void = () => {}): Promise<ImportResult> {
  const work = await makeWorkDir(imagesDir, '.import-');
  const staging = work.path;
  try {
    log(`unpacking ${file}`);
    const { manifest, entries } = await unpackChecked(file, staging, caps);
    await chmod(staging, 0o755);
    await installStaging(imagesDir, manifest.image, staging);
    await work.done();
    log(`installed ${manifest.image} (${entries} entries, digest verified)`);
    return { image: manifest.image, digest: manifest.digest, compilers: manifest.compilers, entries };
  } catch (err) {
    await removeWorkTree(staging).then(work.done, () => {});
    throw err;
  }
}
