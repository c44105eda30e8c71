import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { PROBLEM_LIMITS } from '../limits.js';
import { ProblemInputError } from './draft.js';

// Reading a problem package, which comes from the client: every entry's name, kind and
// declared size is checked from the central directory before any byte is inflated, and
// an entry is inflated only up to the size it declares (yauzl's validateEntrySizes), so
// a zip bomb or a lying entry is refused without filling memory. yauzl also refuses
// absolute names and `..` segments (validateFileName) for every entry it lists. A
// symbolic link is followed when its target stays inside the package (Kattis packages
// reuse tests through them): it is listed as the file (or the files of the directory) it
// names; a link whose target leaves the package, or that names nothing in it, is refused.

export interface ZipFileEntry {
  /** Path inside the package, with / separators (never absolute, never ..). */
  path: string;
  size: number;
  /** The CRC-32 its zip directory declares (yauzl does not check it: a zip that lies
   *  about it only looks larger to the storage check, src/problems/store.ts). */
  crc32: number;
  read(): Promise<Buffer>;
}

export interface ZipListing {
  files: ZipFileEntry[];
  /** Symbolic links whose targets leave the package: never followed; the package refuses them unless it has no use for their paths. */
  escaping: { path: string; target: string }[];
  close(): void;
}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

const bad = (message: string) => new ProblemInputError(message, 'invalid_package');

function zipError(err: Error): ProblemInputError {
  const m = /invalid relative path: (.*)$/.exec(err.message) ?? /absolute path: (.*)$/.exec(err.message);
  if (m) return bad(`the package's entry ${JSON.stringify(m[1])} points outside the package (an absolute path or ..): refused`);
  return bad(`not a zip file, or a damaged one: ${err.message}`);
}

/** Lists a zip's files (directories left out); throws ProblemInputError for anything refused. */
export async function listZip(buffer: Buffer): Promise<ZipListing> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(buffer, { lazyEntries: true, autoClose: false, validateEntrySizes: true, decodeStrings: true });
  } catch (err) {
    throw zipError(err as Error);
  }
  const close = () => zip.close();
  try {
    if (zip.entryCount > PROBLEM_LIMITS.zipEntriesMax) throw bad(`the package has ${zip.entryCount} entries; at most ${PROBLEM_LIMITS.zipEntriesMax} are taken`);
    const files: ZipFileEntry[] = [];
    const links: ZipFileEntry[] = [];
    const seen = new Set<string>();
    try {
      for await (const entry of zip.eachEntry()) {
        const path = entry.fileName.replace(/^\.\//, '');
        if (path.endsWith('/')) continue;
        if (seen.has(path)) throw bad(`the package holds ${path} twice`);
        seen.add(path);
        if (entry.isEncrypted()) throw bad(`the package's ${path} is encrypted`);
        if (!entry.canDecodeFileData()) throw bad(`the package's ${path} uses a compression method other than deflate (${entry.compressionMethod})`);
        if (entry.uncompressedSize > PROBLEM_LIMITS.testFileMaxBytes) {
          throw new ProblemInputError(`the package's ${path} is ${entry.uncompressedSize} bytes; a file may have at most ${PROBLEM_LIMITS.testFileMaxBytes} bytes (16 MiB)`, 'test_file_too_large');
        }
        const file = { path, size: entry.uncompressedSize, crc32: entry.crc32, read: () => readEntry(zip, entry, path) };
        if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) {
          if (entry.uncompressedSize > LINK_TARGET_MAX_BYTES) throw bad(`the package's ${path} is a symbolic link with a target of ${entry.uncompressedSize} bytes: refused`);
          links.push(file);
        } else files.push(file);
      }
    } catch (err) {
      if (err instanceof ProblemInputError) throw err;
      throw zipError(err as Error);
    }
    const escaping: ZipListing['escaping'] = [];
    return { files: [...files, ...(await followLinks(files, links, escaping))], escaping, close };
  } catch (err) {
    close();
    throw err;
  }
}

async function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry, path: string): Promise<Buffer> {
  let stream: Readable;
  try {
    stream = await zip.openReadStreamPromise(entry);
  } catch (err) {
    throw bad(`the package's ${path} cannot be read: ${(err as Error).message}`);
  }
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream) chunks.push(chunk as Buffer);
  } catch (err) {
    // More bytes than declared (a zip bomb lying in its directory), fewer, or a bad CRC.
    throw bad(`the package's ${path} is not what its zip directory says (${(err as Error).message}): a damaged or hostile zip`);
  }
  return Buffer.concat(chunks);
}

const LINK_TARGET_MAX_BYTES = 4096;
/** Links to links followed at most this deep (a loop is refused). */
const LINK_DEPTH_MAX = 8;

/** A link's target as a path inside the package, or null when it leaves it (absolute, or .. past the root). */
export function linkTarget(linkPath: string, target: string): string | null {
  if (target.startsWith('/') || target.includes('\\') || target.includes('\0')) return null;
  const parts = linkPath.split('/').slice(0, -1);
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(segment);
  }
  return parts.join('/');
}

/** Each link as the file it names, or the files of the directory it names, under its own path. */
async function followLinks(files: ZipFileEntry[], all: ZipFileEntry[], escaping: ZipListing['escaping']): Promise<ZipFileEntry[]> {
  if (all.length === 0) return [];
  const targets = new Map<string, string>();
  const links: ZipFileEntry[] = [];
  for (const link of all) {
    const text = (await link.read()).toString('utf8');
    const target = linkTarget(link.path, text);
    if (target === null || target === '') escaping.push({ path: link.path, target: text.slice(0, 200) });
    else {
      targets.set(link.path, target);
      links.push(link);
    }
  }
  const byPath = new Map(files.map((f) => [f.path, f]));
  const resolve = (path: string): string => {
    let p = path;
    for (let depth = 0; depth <= LINK_DEPTH_MAX; depth++) {
      const next = targets.get(p);
      if (next === undefined) return p;
      p = next;
    }
    throw bad(`the package's ${path} is a symbolic link in a loop (or more than ${LINK_DEPTH_MAX} links deep): refused`);
  };
  const out: ZipFileEntry[] = [];
  for (const link of links) {
    const target = resolve(link.path);
    const file = byPath.get(target);
    const as = (f: ZipFileEntry, path: string): ZipFileEntry => ({ path, size: f.size, crc32: f.crc32, read: f.read });
    if (file) {
      out.push(as(file, link.path));
      continue;
    }
    const under = files.filter((f) => f.path.startsWith(`${target}/`));
    if (under.length === 0) throw bad(`the package's ${link.path} is a symbolic link to ${target}, which is not in the package: refused`);
    for (const f of under) out.push(as(f, `${link.path}/${f.path.slice(target.length + 1)}`));
  }
  const taken = new Set(files.map((f) => f.path));
  for (const f of out) {
    if (taken.has(f.path)) throw bad(`the package holds ${f.path} twice (a link and a file)`);
    taken.add(f.path);
  }
  if (files.length + out.length > PROBLEM_LIMITS.zipEntriesMax) throw bad(`the package has ${files.length + out.length} files with its links followed; at most ${PROBLEM_LIMITS.zipEntriesMax} are taken`);
  return out;
}
