import type { StageFile } from './spec.js';

// The stage archive spoken with runbox-init (native/archive.h): files in on fd 3,
// collected files and the program's end back on fd 4. Big-endian integers.
//   'P' u32 size, then u32 argc, u32 envc, u32 collectc, u32 collect_max and that many
//       NUL-terminated strings (argv, NAME=VALUE, names to collect): first, on fd 3 only
//   'F' u16 name_len, name, u32 mode, u32 size, bytes
//   'X' u32 exit code      'S' u32 signal
// Everything that comes back was writable by the program: it is parsed with bounds
// and validated names, and a malformed stream is reported, never trusted.

const PROGRAM = 0x50; // 'P'
const FILE = 0x46; // 'F'
const EXITED = 0x58; // 'X'
const SIGNALED = 0x53; // 'S'
export const NAME_MAX_BYTES = 255;

/** A plain workspace name: no slashes, no NUL, not "." or "..", at most 255 bytes. */
export function isPlainName(name: string): boolean {
  const bytes = Buffer.byteLength(name);
  return bytes > 0 && bytes <= NAME_MAX_BYTES && !name.includes('/') && !name.includes('\0') && name !== '.' && name !== '..';
}

/** What runbox-init runs, sent as the stage archive's first record. */
export interface StageProgram {
  argv: readonly string[];
  env: readonly (readonly [string, string])[];
  collect: readonly string[];
  collectMaxBytes: number;
}

/** runbox-init's bound on the program record (native/archive.h). */
const PROGRAM_MAX_BYTES = 1 << 20;

export function encodeProgram(p: StageProgram): Buffer {
  if (p.argv.length === 0) throw new Error('empty argv');
  const strings = [...p.argv, ...p.env.map(([k, v]) => `${k}=${v}`), ...p.collect];
  if (strings.some((x) => x.includes('\0'))) throw new Error('a program string contains a NUL byte');
  const body = Buffer.from(strings.map((x) => `${x}\0`).join(''));
  const head = Buffer.alloc(5 + 16);
  head[0] = PROGRAM;
  head.writeUInt32BE(16 + body.length, 1);
  head.writeUInt32BE(p.argv.length, 5);
  head.writeUInt32BE(p.env.length, 9);
  head.writeUInt32BE(p.collect.length, 13);
  head.writeUInt32BE(p.collectMaxBytes, 17);
  if (16 + body.length > PROGRAM_MAX_BYTES) throw new Error('the program record is too large');
  return Buffer.concat([head, body]);
}

/** The stage archive for fd 3: the program's record (when given), then the files. */
export function encodeStageIn(files: readonly StageFile[], program?: StageProgram): Buffer {
  const parts: Buffer[] = program ? [encodeProgram(program)] : [];
  for (const f of files) {
    if (!isPlainName(f.name)) throw new Error(`stage file name is not a plain name: ${JSON.stringify(f.name)}`);
    const name = Buffer.from(f.name);
    const head = Buffer.alloc(1 + 2 + name.length + 8);
    head[0] = FILE;
    head.writeUInt16BE(name.length, 1);
    name.copy(head, 3);
    head.writeUInt32BE(f.mode & 0o777, 3 + name.length);
    head.writeUInt32BE(f.content.length, 7 + name.length);
    parts.push(head, f.content);
  }
  return Buffer.concat(parts);
}

export type ProgramEnd = { kind: 'exited'; code: number } | { kind: 'signaled'; signal: number };

export interface StageOut {
  files: StageFile[];
  end: ProgramEnd | null;
  /** Why the stream was rejected, when it was. */
  error?: string;
}

/** Parses what runbox-init sent on fd 4. `maxFileBytes` bounds all files together. */
export function decodeStageOut(buf: Buffer, maxFileBytes: number): StageOut {
  const files: StageFile[] = [];
  let end: ProgramEnd | null = null;
  let total = 0;
  let at = 0;
  const need = (n: number) => at + n <= buf.length;
  while (at < buf.length) {
    if (end) return { files, end, error: 'data after the end record' };
    const type = buf[at]!;
    if (type === EXITED || type === SIGNALED) {
      if (!need(5)) return { files, end, error: 'truncated end record' };
      const value = buf.readUInt32BE(at + 1);
      at += 5;
      if (type === EXITED && value <= 255) end = { kind: 'exited', code: value };
      else if (type === SIGNALED && value >= 1 && value <= 64) end = { kind: 'signaled', signal: value };
      else return { files, end: null, error: 'end record out of range' };
      continue;
    }
    if (type !== FILE) return { files, end, error: `unknown record type ${type}` };
    if (!need(3)) return { files, end, error: 'truncated file record' };
    const nameLen = buf.readUInt16BE(at + 1);
    if (nameLen > NAME_MAX_BYTES || !need(3 + nameLen + 8)) return { files, end, error: 'bad file record' };
    const nameBytes = buf.subarray(at + 3, at + 3 + nameLen);
    const name = nameBytes.toString('utf8');
    if (!isPlainName(name) || !Buffer.from(name).equals(nameBytes)) return { files, end, error: 'bad file name' };
    const mode = buf.readUInt32BE(at + 3 + nameLen) & 0o777;
    const size = buf.readUInt32BE(at + 7 + nameLen);
    at += 11 + nameLen;
    total += size;
    if (total > maxFileBytes) return { files, end, error: 'collected files too large' };
    if (!need(size)) return { files, end, error: 'truncated file content' };
    files.push({ name, mode, content: Buffer.from(buf.subarray(at, at + size)) });
    at += size;
  }
  return { files, end };
}
