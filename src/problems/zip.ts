import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import { PROBLEM_LIMITS } from '../limits.js';
import { ProblemInputError } from './draft.js';

// Reading a problem package, which comes from the client: every entry's name, kind and
// declared size is checked from the central directory before any byte is inflated, and
// an entry is inflated only up to the size it declares (yauzl's validateEntrySizes), so
// a zip bomb or a lying entry is refused without filling memory. yauzl also refuses
// absolute names and `..` segments (validateFileName) for every entry it lists.

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
    const seen = new Set<string>();
    try {
      for await (const entry of zip.eachEntry()) {
        const path = entry.fileName.replace(/^\.\//, '');
        if (path.endsWith('/')) continue;
        if (seen.has(path)) throw bad(`the package holds ${path} twice`);
        seen.add(path);
        if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) throw bad(`the package's ${path} is a symbolic link: links are refused`);
        if (entry.isEncrypted()) throw bad(`the package's ${path} is encrypted`);
        if (!entry.canDecodeFileData()) throw bad(`the package's ${path} uses a compression method other than deflate (${entry.compressionMethod})`);
        if (entry.uncompressedSize > PROBLEM_LIMITS.testFileMaxBytes) {
          throw new ProblemInputError(`the package's ${path} is ${entry.uncompressedSize} bytes; a file may have at most ${PROBLEM_LIMITS.testFileMaxBytes} bytes (16 MiB)`, 'test_file_too_large');
        }
        files.push({ path, size: entry.uncompressedSize, crc32: entry.crc32, read: () => readEntry(zip, entry, path) });
      }
    } catch (err) {
      if (err instanceof ProblemInputError) throw err;
      throw zipError(err as Error);
    }
    return { files, close };
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
