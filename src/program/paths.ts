import { PROGRAM_LIMITS } from '../limits.js';

// The names of a program's files: relative paths in the workspace (/box), with
// directories. Checked here for every face (the REST and WebSocket requests, the
// Piston and Judge0 routes) before anything is stored; runbox-init checks the same
// shape again when it writes them, never following a symlink or leaving the workspace.

const SEGMENT = /^[A-Za-z0-9._+-]+$/;

/** Where a program writes the files it returns: made empty in every run stage, so no file of the request may be in it. */
export const OUT_DIR = 'out';

/** What is wrong with a file's name, or undefined when it is a good one. */
export function pathProblem(name: string): string | undefined {
  if (name === '') return 'is empty';
  const bytes = Buffer.byteLength(name);
  if (bytes > PROGRAM_LIMITS.fileNameMaxBytes) return `is ${bytes} bytes long; at most ${PROGRAM_LIMITS.fileNameMaxBytes}`;
  if (name.startsWith('/')) return 'must be a relative path (no leading /)';
  const segments = name.split('/');
  for (const s of segments) {
    if (s === '') return 'has an empty segment (a doubled or trailing /)';
    if (s === '..') return 'must not contain ..';
    if (/^\.+$/.test(s)) return 'must not have a segment of dots only';
    if (!SEGMENT.test(s)) return 'may hold only letters, digits, . _ + - and / between directories';
  }
  if (segments[0] === OUT_DIR) return `must not be ${OUT_DIR} or in ${OUT_DIR}/: /box/${OUT_DIR}/ is where the program writes the files it returns`;
  return undefined;
}

/**
 * The first conflict among a program's names: a name given twice, or a file that is
 * also another's directory (`a` and `a/b`). Returns the index of the later one and why.
 */
export function nameConflict(names: readonly string[]): { index: number; problem: string } | undefined {
  const files = new Map<string, number>();
  const dirs = new Map<string, number>();
  for (const [i, name] of names.entries()) {
    const earlier = files.get(name);
    if (earlier !== undefined) return { index: i, problem: `${name} is given to files.${earlier} too` };
    const asDir = dirs.get(name);
    if (asDir !== undefined) return { index: i, problem: `${name} is a directory of files.${asDir}` };
    const parts = name.split('/');
    for (let k = 1; k < parts.length; k++) {
      const dir = parts.slice(0, k).join('/');
      const file = files.get(dir);
      if (file !== undefined) return { index: i, problem: `${dir} is a file (files.${file}), not a directory` };
      if (!dirs.has(dir)) dirs.set(dir, i);
    }
    files.set(name, i);
  }
  return undefined;
}

/** The name's extension with its dot (`.java`), or '' when it has none. */
export function extensionOf(name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot) : '';
}
