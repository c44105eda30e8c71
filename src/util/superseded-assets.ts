import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The code editor's files (dist/browser/editor/) are named by a hash of their content
// and served as immutable; /widget/v1.js, the loader that names them, is not (a page
// asks for it again after LOADER_MAX_AGE_SECONDS). A page that holds the loader of an
// earlier build asks for that build's files, so a build (scripts/build-browser.mjs) and
// an install (scripts/install) keep the files they no longer name for
// SUPERSEDED_KEEP_SECONDS. The directory's manifest records when each stopped being
// named; past that time it is removed.

/** How long a browser may use /widget/v1.js before asking again (ETag: usually a 304). */
export const LOADER_MAX_AGE_SECONDS = 86_400;

/** How long a file stays served once no build names it: the loader's max-age, and room for caches that serve a loader a while past it. */
export const SUPERSEDED_KEEP_SECONDS = 7 * LOADER_MAX_AGE_SECONDS;

/** In the directory: {file name: when it stopped being named (ISO time)}. */
export const SUPERSEDED_MANIFEST = 'superseded.json';

type Manifest = Record<string, string>;

function readManifest(dir: string): Manifest {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, SUPERSEDED_MANIFEST), 'utf8')) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter(([, at]) => typeof at === 'string' && !Number.isNaN(Date.parse(at)))) as Manifest;
  } catch {
    return {};
  }
}

const servedFiles = (dir: string): string[] => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.js')) : []);

/** The files of `dir` its build names: those its manifest does not list. */
export function currentFiles(dir: string): Set<string> {
  const manifest = readManifest(dir);
  return new Set(servedFiles(dir).filter((f) => !(f in manifest)));
}

export interface KeepOptions {
  /** The files the build names; every other one in `dir` is superseded. */
  current: Set<string>;
  /** A directory served until now (the installed release's) whose files `dir` lacks are carried over. */
  earlier?: string;
  now?: number;
  keepSeconds?: number;
}

/**
 * Records the files of `dir` that `current` does not name as superseded (from now, or
 * from when the earlier directory's manifest says), carries over those of `earlier`,
 * and removes those superseded for longer than `keepSeconds`. Returns what it removed.
 */
export function keepSuperseded(dir: string, opts: KeepOptions): string[] {
  const now = opts.now ?? Date.now();
  const keepMs = (opts.keepSeconds ?? SUPERSEDED_KEEP_SECONDS) * 1000;
  const manifest = readManifest(dir);
  if (opts.earlier) {
    const before = readManifest(opts.earlier);
    const here = new Set(servedFiles(dir));
    for (const file of servedFiles(opts.earlier)) {
      if (here.has(file) || opts.current.has(file)) continue;
      copyFileSync(join(opts.earlier, file), join(dir, file));
      manifest[file] = before[file] ?? new Date(now).toISOString();
    }
  }
  const removed: string[] = [];
  const present = new Set(servedFiles(dir));
  for (const file of present) {
    if (opts.current.has(file)) delete manifest[file];
    else manifest[file] ??= new Date(now).toISOString();
  }
  for (const [file, at] of Object.entries(manifest)) {
    if (!present.has(file)) delete manifest[file];
    else if (now - Date.parse(at) > keepMs) {
      unlinkSync(join(dir, file));
      delete manifest[file];
      removed.push(file);
    }
  }
  // Written whole, then renamed: a build stopped half-way leaves the earlier manifest.
  const tmp = join(dir, `${SUPERSEDED_MANIFEST}.tmp`);
  writeFileSync(tmp, JSON.stringify(manifest, Object.keys(manifest).sort(), 2) + '\n');
  renameSync(tmp, join(dir, SUPERSEDED_MANIFEST));
  return removed;
}
