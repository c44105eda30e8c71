import type { StageFile } from './spec.js';

// The stage archive spoken with runbox-init (native/archive.h): directories and files in
// on fd 3, collected files and the program's end back on fd 4. Big-endian integers.
//   'P' u32 size, then u32 argc, u32 envc, u32 collectc, u32 collect_max, u32 collect_files
//       and that many NUL-terminated strings (argv, NAME=VALUE, paths to collect): first, on fd 3 only
//   'D' u16 path_len, path, u32 mode                    (fd 3)
//   'F' u16 path_len, path, u32 mode, u32 size, bytes   (fd 3 and 4)
//   'O' u16 path_len, path, u32 size: a file left out of what was collected (fd 4)
//   'T' u32 high, u32 low: when the program was reaped, CLOCK_MONOTONIC ns (fd 4, before the end)
//   'X' u32 exit code      'S' u32 signal
// Everything that comes back was writable by the program: it is parsed with bounds
// and validated paths, and a malformed stream is reported, never trusted.

const PROGRAM = 0x50; // 'P'
const DIR = 0x44; // 'D'
const FILE = 0x46; // 'F'
const OMITTED = 0x4f; // 'O'
const ENDED_AT = 0x54; // 'T'
const EXITED = 0x58; // 'X'
const SIGNALED = 0x53; // 'S'
export const NAME_MAX_BYTES = 255;
export const PATH_MAX_BYTES = 4095;
/** Entries a directory collect looks at (ARCHIVE_WALK_MAX). */
export const WALK_MAX_ENTRIES = 4096;

/** A workspace path: relative, segments of 1..255 bytes without NUL, none "." or "..", at most 4095 bytes. */
export function isWorkspacePath(path: string): boolean {
  const bytes = Buffer.byteLength(path);
  if (bytes === 0 || bytes > PATH_MAX_BYTES || path.includes('\0')) return false;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..' && Buffer.byteLength(s) <= NAME_MAX_BYTES);
}

/** A path to collect: a workspace path, one ending in / (every file below it) or ./ (the whole workspace). */
export function isCollectPath(path: string): boolean {
  return path === './' || isWorkspacePath(path.endsWith('/') ? path.slice(0, -1) : path);
}

/** What runbox-init runs, sent as the stage archive's first record. */
export interface StageProgram {
  argv: readonly string[];
  env: readonly (readonly [string, string])[];
  collect: readonly string[];
  collectMaxBytes: number;
  collectMaxFiles: number;
}

/** runbox-init's bounds on the program record and its fixed part (native/archive.h). */
const PROGRAM_MAX_BYTES = 1 << 20;
const PROGRAM_HEAD_BYTES = 20;

export function encodeProgram(p: StageProgram): Buffer {
  if (p.argv.length === 0) throw new Error('empty argv');
  const strings = [...p.argv, ...p.env.map(([k, v]) => `${k}=${v}`), ...p.collect];
  if (strings.some((x) => x.includes('\0'))) throw new Error('a program string contains a NUL byte');
  const bad = p.collect.find((c) => !isCollectPath(c));
  if (bad !== undefined) throw new Error(`not a path to collect: ${JSON.stringify(bad)}`);
  const body = Buffer.from(strings.map((x) => `${x}\0`).join(''));
  const head = Buffer.alloc(5 + PROGRAM_HEAD_BYTES);
  head[0] = PROGRAM;
  head.writeUInt32BE(PROGRAM_HEAD_BYTES + body.length, 1);
  head.writeUInt32BE(p.argv.length, 5);
  head.writeUInt32BE(p.env.length, 9);
  head.writeUInt32BE(p.collect.length, 13);
  head.writeUInt32BE(p.collectMaxBytes, 17);
  head.writeUInt32BE(p.collectMaxFiles, 21);
  if (PROGRAM_HEAD_BYTES + body.length > PROGRAM_MAX_BYTES) throw new Error('the program record is too large');
  return Buffer.concat([head, body]);
}

const pathBytes = (path: string, what: string): Buffer => {
  if (!isWorkspacePath(path)) throw new Error(`stage ${what} is not a workspace path: ${JSON.stringify(path)}`);
  return Buffer.from(path);
};

/** The stage archive for fd 3: the program's record (when given), the directories made empty, then the files. */
export function encodeStageIn(files: readonly StageFile[], program?: StageProgram, dirs: readonly string[] = []): Buffer {
  const parts: Buffer[] = program ? [encodeProgram(program)] : [];
  for (const d of dirs) {
    const name = pathBytes(d, 'directory');
    const head = Buffer.alloc(1 + 2 + name.length + 4);
    head[0] = DIR;
    head.writeUInt16BE(name.length, 1);
    name.copy(head, 3);
    head.writeUInt32BE(0o755, 3 + name.length);
    parts.push(head);
  }
  for (const f of files) {
    const name = pathBytes(f.name, 'file');
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
  /** Files to collect left out past the bounds, by path and size. */
  omitted: { name: string; size: number }[];
  end: ProgramEnd | null;
  /** When the program was reaped (CLOCK_MONOTONIC nanoseconds, the clock of process.hrtime). */
  endedAtNs?: bigint;
  /** Why the stream was rejected, when it was. */
  error?: string;
}

/** Parses what runbox-init sent on fd 4. `maxFileBytes` bounds all files together. */
export function decodeStageOut(buf: Buffer, maxFileBytes: number): StageOut {
  const files: StageFile[] = [];
  const omitted: StageOut['omitted'] = [];
  let end: ProgramEnd | null = null;
  let endedAtNs: bigint | undefined;
  let total = 0;
  let at = 0;
  const need = (n: number) => at + n <= buf.length;
  const out = (error?: string): StageOut => ({ files, omitted, end, ...(endedAtNs !== undefined ? { endedAtNs } : {}), ...(error === undefined ? {} : { error }) });
  while (at < buf.length) {
    if (end) return out('data after the end record');
    const type = buf[at]!;
    if (type === ENDED_AT) {
      if (endedAtNs !== undefined || !need(9)) return out('bad end time record');
      endedAtNs = (BigInt(buf.readUInt32BE(at + 1)) << 32n) | BigInt(buf.readUInt32BE(at + 5));
      at += 9;
      continue;
    }
    if (type === EXITED || type === SIGNALED) {
      if (!need(5)) return out('truncated end record');
      const value = buf.readUInt32BE(at + 1);
      at += 5;
      if (type === EXITED && value <= 255) end = { kind: 'exited', code: value };
      else if (type === SIGNALED && value >= 1 && value <= 64) end = { kind: 'signaled', signal: value };
      else return { files, omitted, end: null, error: 'end record out of range' };
      continue;
    }
    if (type !== FILE && type !== OMITTED) return out(`unknown record type ${type}`);
    const fixed = type === FILE ? 8 : 4;
    if (!need(3)) return out('truncated file record');
    const nameLen = buf.readUInt16BE(at + 1);
    if (nameLen > PATH_MAX_BYTES || !need(3 + nameLen + fixed)) return out('bad file record');
    const nameBytes = buf.subarray(at + 3, at + 3 + nameLen);
    const name = nameBytes.toString('utf8');
    if (!isWorkspacePath(name) || !Buffer.from(name).equals(nameBytes)) return out('bad file name');
    if (type === OMITTED) {
      omitted.push({ name, size: buf.readUInt32BE(at + 3 + nameLen) });
      at += 7 + nameLen;
      continue;
    }
    const mode = buf.readUInt32BE(at + 3 + nameLen) & 0o777;
    const size = buf.readUInt32BE(at + 7 + nameLen);
    at += 11 + nameLen;
    total += size;
    if (total > maxFileBytes) return out('collected files too large');
    if (!need(size)) return out('truncated file content');
    files.push({ name, mode, content: Buffer.from(buf.subarray(at, at + size)) });
    at += size;
  }
  return out();
}
