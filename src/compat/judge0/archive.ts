import yauzl from 'yauzl';
import { PROGRAM_LIMITS } from '../../limits.js';
import type { DecodedFile } from '../../program/program.js';

// Judge0's additional_files: a Base64 zip unpacked beside the program (Judge0 runs
// `unzip -n`, so nothing replaces the source). Read here, before anything is stored:
// bounded by the program's limits in files and bytes (counted as the entries inflate,
// never trusting the sizes the archive declares), directories made from the names,
// and only regular files (a symlink entry is refused, not followed).

export class ArchiveError extends Error {}

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/** The zip's regular files (directories are implied by their names), in archive order. */
export function unzipFiles(zip: Buffer): Promise<DecodedFile[]> {
  return new Promise((resolve, reject) => {
    // validateEntrySizes: an entry that inflates to another size than it declares is an error.
    yauzl.fromBuffer(zip, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true, decodeStrings: true }, (err, archive) => {
      if (err || !archive) return reject(new ArchiveError(`is not a zip archive (${err?.message ?? 'unreadable'})`));
      const files: DecodedFile[] = [];
      let total = 0;
      const fail = (message: string) => {
        archive.close();
        reject(new ArchiveError(message));
      };
      archive.on('error', (e: Error) => fail(`is not a readable zip archive (${e.message})`));
      archive.on('end', () => resolve(files));
      archive.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName.endsWith('/')) return archive.readEntry();
        if (((entry.externalFileAttributes >>> 16) & S_IFMT) === S_IFLNK) return fail(`holds a symbolic link (${entry.fileName}); only files are unpacked`);
        if (files.length >= PROGRAM_LIMITS.filesMax) return fail(`holds more than ${PROGRAM_LIMITS.filesMax} files`);
        archive.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(`has an entry that cannot be read (${entry.fileName})`);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => {
            total += chunk.length;
            if (total > PROGRAM_LIMITS.filesMaxBytes) {
              stream.destroy();
              return fail(`unpacks to more than ${PROGRAM_LIMITS.filesMaxBytes.toLocaleString('en-US')} bytes`);
            }
            chunks.push(chunk);
          });
          stream.on('error', (se: Error) => fail(`has an entry that cannot be read (${entry.fileName}: ${se.message})`));
          stream.on('end', () => {
            // The bytes as they are; modes are not kept (scripts run through bash, as Judge0's do).
            files.push({ name: entry.fileName, content: Buffer.concat(chunks), text: false });
            archive.readEntry();
          });
        });
      });
      archive.readEntry();
    });
  });
}
