import { packageLanguageCode, type LanguageRecipe } from '../compilers/languages.js';
import type { CompilerRecipe } from '../compilers/recipe.js';
import type { RunFile } from '../db/schema.js';
import { PROGRAM_LIMITS } from '../limits.js';
import { checkFiles, ProgramError, type DecodedFile } from '../program/program.js';
import type { StoredProgram } from '../program/plan.js';
import { placeSource } from '../program/source-file.js';
import { ProblemInputError } from './draft.js';
import type { ZipFileEntry } from './zip.js';

// A package's included files (the ICPC format's include/<language>/ and include/default/):
// copied over a submission in that language before it is built, overwriting its files of
// the same names; a function problem's grader or stub (the CMS and IOI style: the
// submission is solve(), the package's grader has main). <language> is the format's
// language code (cpp, c, java, python3, ...: packageLanguageCode); a language's own
// directory replaces include/default/ for it. An included file named as the language's
// main file (the format's entry point, __main__.py, main.js, main.php, or the recipe's
// source name, main.py) is the driver: it becomes the program's main file, and the
// submission's main file stays beside it under its own name.

export type Includes = Record<string, RunFile[]>;

/** The entry points the format's languages table names, by language code. */
const DRIVER_NAMES: Record<string, string[]> = {
  python2: ['__main__.py'],
  python3: ['__main__.py'],
  javascript: ['main.js'],
  php: ['main.php'],
  lisp: ['main.lisp', 'main.cl'],
};

/** include/<language>/ of the package's files, by language; null when it has none. Throws ProblemInputError. */
export async function readIncludes(files: Map<string, ZipFileEntry>): Promise<Includes | null> {
  const byLanguage = new Map<string, { name: string; file: ZipFileEntry }[]>();
  for (const [path, file] of files) {
    const m = /^include\/([^/]+)\/(.+)$/.exec(path);
    if (!m) continue;
    const list = byLanguage.get(m[1]!) ?? [];
    list.push({ name: m[2]!, file });
    byLanguage.set(m[1]!, list);
  }
  if (byLanguage.size === 0) return null;
  // Refused from the declared sizes before any is inflated: all of include/ within a program's bounds (it is kept with the version, not as test data).
  const total = [...byLanguage.values()].flat().reduce((n, e) => n + e.file.size, 0);
  if (total > PROGRAM_LIMITS.filesMaxBytes) throw new ProblemInputError(`include/ holds ${total} bytes; its files may hold at most ${PROGRAM_LIMITS.filesMaxBytes} together`, 'invalid_package');
  const includes: Includes = {};
  for (const [language, entries] of [...byLanguage].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (!/^[a-z0-9]+$/.test(language)) throw new ProblemInputError(`include/${language}/: a language code is lower-case letters and digits (cpp, python3, default)`, 'invalid_package');
    // checkFiles holds each language's files to a program's bounds (their number, names and sizes).
    const decoded: DecodedFile[] = [];
    for (const e of entries) decoded.push({ name: e.name, content: await e.file.read(), text: false });
    try {
      checkFiles(decoded);
    } catch (err) {
      if (err instanceof ProgramError) throw new ProblemInputError(`include/${language}/: ${err.field.replace(/^files\.(\d+)(\.\w+)?/, (_, i: string) => decoded[Number(i)]!.name)} ${err.problem}`, 'invalid_package');
      throw err;
    }
    includes[language] = decoded.map((f) => ({ name: f.name, content_base64: f.content.toString('base64') })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }
  return includes;
}

/** The files a submission in this compiler's language gets: its language's, else include/default/'s; none when neither. */
export function includedFor(includes: Includes | null | undefined, recipe: Pick<LanguageRecipe, 'language' | 'version'>): RunFile[] {
  if (!includes) return [];
  return includes[packageLanguageCode(recipe)] ?? includes.default ?? [];
}

/** The submission with the included files copied over it, as it is built. */
export function withIncluded(job: StoredProgram, recipe: Pick<CompilerRecipe, 'language' | 'version' | 'source' | 'sourceFromPublicClass'>, included: readonly RunFile[]): StoredProgram {
  if (included.length === 0) return job;
  const options = job.run_options ?? {};
  const mainName = options.main ?? placeSource(recipe, job.code).fileName;
  const names = new Set(included.map((f) => f.name));
  const drivers = [recipe.source, ...(DRIVER_NAMES[packageLanguageCode(recipe)] ?? [])];
  const driver = included.find((f) => drivers.includes(f.name));
  const own = (options.files ?? []).filter((f) => !names.has(f.name));
  if (driver) {
    // The driver is the program; the submission's main file is one of its files, unless the driver has its name.
    const submitted = names.has(mainName) ? [] : [{ name: mainName, content_base64: Buffer.from(job.code, 'utf8').toString('base64') }];
    return {
      code: Buffer.from(driver.content_base64, 'base64').toString('utf8'),
      run_options: { ...options, main: driver.name, files: [...submitted, ...own, ...included.filter((f) => f !== driver)] },
    };
  }
  const replacement = included.find((f) => f.name === mainName);
  return {
    code: replacement ? Buffer.from(replacement.content_base64, 'base64').toString('utf8') : job.code,
    run_options: { ...options, main: mainName, files: [...own, ...included.filter((f) => f !== replacement)] },
  };
}
