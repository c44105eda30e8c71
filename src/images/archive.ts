import { execa } from 'execa';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

// Image archives are tar, optionally compressed with zstd or gzip. Readers go by the
// file's magic bytes, never by its name.

export type Compression = 'zstd' | 'gzip' | 'none';

const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

export async function detectCompression(file: string): Promise<Compression> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fh.read(head, 0, 4, 0);
    if (bytesRead >= 4 && head.subarray(0, 4).equals(ZSTD_MAGIC)) return 'zstd';
    if (bytesRead >= 2 && head.subarray(0, 2).equals(GZIP_MAGIC)) return 'gzip';
    return 'none';
  } finally {
    await fh.close();
  }
}

export interface Decompressed {
  stream: Readable;
  /** Resolves once the decompressor has finished; rejects when it failed. */
  done: () => Promise<void>;
  stop: () => void;
}

/** The tar bytes of an archive file, whatever its compression. */
export async function openArchive(file: string): Promise<Decompressed> {
  const kind = await detectCompression(file);
  if (kind === 'zstd') {
    const child = execa('zstd', ['-d', '-c', '-q', '--', file], { stdin: 'ignore', buffer: { stdout: false, stderr: true }, reject: false });
    return {
      stream: child.stdout,
      done: async () => {
        const r = await child;
        if (r.exitCode !== 0 && !r.isTerminated) throw new Error(`zstd could not decompress the archive: ${String(r.stderr).trim()}`);
      },
      stop: () => {
        child.kill();
      },
    };
  }
  const raw = createReadStream(file);
  const stream = kind === 'gzip' ? raw.pipe(createGunzip()) : raw;
  if (kind === 'gzip') raw.on('error', (err) => stream.destroy(err));
  return { stream, done: async () => {}, stop: () => stream.destroy() };
}
