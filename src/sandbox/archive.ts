import { isUtf8 } from 'node:buffer';
import type { StageFile } from './spec.js';

// The stage archive spoken with runbox-init (native/archive.h): directories and files in
// on fd 3, the program's end and the collected files back on fd 4. Big-endian integers.
//   'P' u32 size, then u32 argc, u32 envc, u32 collectc, u32 collect_max, u32 collect_files
//       and that many NUL-terminated strings (argv, NAME=VALUE, paths to collect): first, on fd 3 only
//   'D' u16 path_len, path, u32 mode                    (fd 3)
//   'F' u16 path_len, path, u32 mode, u32 size, bytes   (fd 3 and 4)
//   'O' u16 path_len, path, u32 size: a file left out of what was collected, past the
//       bounds or named outside UTF-8 (fd 4)
//   'T' u32 high, u32 low: when the program was reaped, CLOCK_MONOTONIC ns (fd 4, first)
//   'X' u32 exit code      'S' u32 signal: on fd 4 after 'T', before the files
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
  return isWorkspacePathBytes(Buffer.from(path));
}

/** The same on a path's bytes, whatever their encoding (native/init/archive.c: valid_path). */
function isWorkspacePathBytes(bytes: Uint8Array): boolean {
  if (bytes.length === 0 || bytes.length > PATH_MAX_BYTES || bytes.includes(0)) return false;
  let seg = 0;
  for (let i = 0; i <= bytes.length; i++) {
    if (i < bytes.length && bytes[i] !== 0x2f) continue;
    const n = i - seg;
    if (n === 0 || n > NAME_MAX_BYTES) return false;
    if (bytes[seg] === 0x2e && (n === 1 || (n === 2 && bytes[seg + 1] === 0x2e))) return false;
    seg = i + 1;
  }
  return true;
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

/** Why a file to collect did not come back: past the bounds, or a name that is not UTF-8 (no API can carry it). */
export const OMITTED_REASONS = ['limits', 'name'] as const;
export type OmittedReason = (typeof OMITTED_REASONS)[number];

export interface StageOut {
  files: StageFile[];
  /** Files to collect left out, by path (escaped when it is not UTF-8: `\xff`), size and why. */
  omitted: { name: string; size: number; reason: OmittedReason }[];
  end: ProgramEnd | null;
  /** When the program was reaped (CLOCK_MONOTONIC nanoseconds, the clock of process.hrtime). */
  endedAtNs?: bigint;
  /** Why the stream was rejected: before the end record, the whole stage; after it, the
   *  files from that point on (the program's end and what came before it stand). */
  error?: string;
}

/** Length of the well-formed UTF-8 sequence at buf[i] (Unicode table 3-7), 0 when there is none. */
function utf8Length(buf: Uint8Array, i: number): number {
  const b = buf[i]!;
  if (b < 0x80) return 1;
  const cont = (k: number, lo = 0x80, hi = 0xbf) => i + k < buf.length && buf[i + k]! >= lo && buf[i + k]! <= hi;
  if (b >= 0xc2 && b <= 0xdf) return cont(1) ? 2 : 0;
  if (b >= 0xe0 && b <= 0xef) {
    const lo = b === 0xe0 ? 0xa0 : 0x80;
    const hi = b === 0xed ? 0x9f : 0xbf;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (b >= 0xf0 && b <= 0xf4) {
    const lo = b === 0xf0 ? 0x90 : 0x80;
    const hi = b === 0xf4 ? 0x8f : 0xbf;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

/** A name that is not UTF-8 as text: each byte outside a well-formed sequence as `\xHH`, a backslash as `\\`. */
export function escapedName(bytes: Uint8Array): string {
  let text = '';
  for (let i = 0; i < bytes.length; ) {
    const n = utf8Length(bytes, i);
    if (n === 0) {
      text += `\\x${bytes[i]!.toString(16).padStart(2, '0')}`;
      i += 1;
    } else {
      const part = Buffer.from(bytes.subarray(i, i + n)).toString('utf8');
      text += part === '\\' ? '\\\\' : part;
      i += n;
    }
  }
  return text;
}

/**
 * Parses what runbox-init sent on fd 4: the program's end first, then the collected
 * files. `maxFileBytes` bounds all files together. A file whose name is not UTF-8 is
 * listed in `omitted` (reason `name`), never a reason to refuse the stage; anything
 * malformed after the end record costs the files from there on, not the program's end.
 */
export function decodeStageOut(buf: Buffer, maxFileBytes: number): StageOut {
  const files: StageFile[] = [];
  const omitted: StageOut['omitted'] = [];
  let end: ProgramEnd | null = null;
  let endedAtNs: bigint | undefined;
  let total = 0;
  let at = 0;
  const need = (n: number) => at + n <= buf.length;
  const out = (error?: string): StageOut => ({ files, omitted, end, ...(endedAtNs !== undefined ? { endedAtNs } : {}), ...(error === undefined ? {} : { error }) });
  if (buf.length === 0) return out();
  if (buf[0] === ENDED_AT) {
    if (!need(9)) return out('bad end time record');
    endedAtNs = (BigInt(buf.readUInt32BE(1)) << 32n) | BigInt(buf.readUInt32BE(5));
    at = 9;
  }
  const first = buf[at];
  if (first !== EXITED && first !== SIGNALED) {
    return out(first === undefined ? 'no end record' : first === ENDED_AT ? 'bad end time record' : first === FILE || first === OMITTED ? 'a file record before the end record' : `unknown record type ${first}`);
  }
  if (!need(5)) return out('truncated end record');
  const value = buf.readUInt32BE(at + 1);
  if (first === EXITED && value <= 255) end = { kind: 'exited', code: value };
  else if (first === SIGNALED && value >= 1 && value <= 64) end = { kind: 'signaled', signal: value };
  else return out('end record out of range');
  at += 5;
  while (at < buf.length) {
    const type = buf[at]!;
    if (type === EXITED || type === SIGNALED || type === ENDED_AT) return out('a second end record');
    if (type !== FILE && type !== OMITTED) return out(`unknown record type ${type}`);
    const fixed = type === FILE ? 8 : 4;
    if (!need(3)) return out('truncated file record');
    const nameLen = buf.readUInt16BE(at + 1);
    if (nameLen > PATH_MAX_BYTES || !need(3 + nameLen + fixed)) return out('bad file record');
    const nameBytes = buf.subarray(at + 3, at + 3 + nameLen);
    const utf8 = isUtf8(nameBytes);
    const name = utf8 ? nameBytes.toString('utf8') : escapedName(nameBytes);
    // The path's shape is checked on the bytes: a well-formed walk never gives another.
    if (!isWorkspacePathBytes(nameBytes)) return out('bad file name');
    const head = buf.readUInt32BE(at + 3 + nameLen);
    if (type === OMITTED) {
      omitted.push({ name, size: head, reason: utf8 ? 'limits' : 'name' });
      at += 7 + nameLen;
      continue;
    }
    const size = buf.readUInt32BE(at + 7 + nameLen);
    at += 11 + nameLen;
    if (!need(size)) return out('truncated file content');
    if (!utf8) {
      omitted.push({ name, size, reason: 'name' });
      at += size;
      continue;
    }
    total += size;
    if (total > maxFileBytes) return out('collected files too large');
    files.push({ name, mode: head & 0o777, content: Buffer.from(buf.subarray(at, at + size)) });
    at += size;
  }
  return out();
}
