import { extensionOf } from '../program/paths.js';
import type { CompilerEntry } from './catalogue.js';
import type { CompilerRecipe } from './recipe.js';

// Which language, and so which compiler identifier, a file is in where a file rather than
// a compiler is named: a package's validator, interactor, grader or example submission.
// The recipes say it as data (src/compilers/recipe.ts: `extensions`, `dialects`,
// `shebang`), after the judges whose packages runbox reads: problemtools'
// config/languages.yaml for Kattis packages, DOMjudge's default language table for
// DOMjudge's. A claim is looked at in this order:
//   1. a `shebang` claim whose pattern matches the file's first line (Kattis: `.py`
//      under `#!…python2` is Python 2);
//   2. the package dialect's own claims (`dialects`: Kattis' `.pl` is Prolog);
//   3. `extensions` (default: the source's extension and `sources`'), leaving out a
//      compiler whose shebang claim covers the extension and did not match.
// The first step that finds a claim decides; several languages there are ambiguous. Of
// one language's compilers the newest offered one builds the file.

/** The judge whose packages' conventions apply: Kattis (problemtools) or DOMjudge. */
export type Dialect = 'kattis' | 'domjudge';

export type LanguageRecipe = Pick<CompilerRecipe, 'language' | 'version' | 'source' | 'sources' | 'extensions' | 'dialects' | 'shebang'>;

/** How much of a file's first line a shebang pattern is matched against. */
const FIRST_LINE_MAX = 200;

/** The extensions a compiler's language takes: its recipe's `extensions`, else its source's and `sources`'. */
export function languageExtensions(recipe: LanguageRecipe): string[] {
  if (recipe.extensions) return [...recipe.extensions];
  const own = extensionOf(recipe.source);
  return [...new Set([...(own === '' ? [] : [own]), ...(recipe.sources ?? [])])];
}

/** A file's first line, as far as a shebang pattern reads it. */
export function firstLine(content: Buffer | string): string {
  const text = typeof content === 'string' ? content.slice(0, FIRST_LINE_MAX * 4) : content.subarray(0, FIRST_LINE_MAX * 4).toString('utf8');
  const newline = text.indexOf('\n');
  return (newline === -1 ? text : text.slice(0, newline)).slice(0, FIRST_LINE_MAX);
}

export type FileLanguage =
  | { compiler: string; language: string }
  | { compiler: null; /** Why none: no language offered here takes it, or several do. */ reason: string };

export interface LanguageFile {
  name: string;
  /** The file's first line (firstLine), for shebang claims. */
  firstLine: string;
}

const shebangs = new Map<string, RegExp>();
const shebangOf = (pattern: string): RegExp => {
  let re = shebangs.get(pattern);
  if (!re) shebangs.set(pattern, (re = new RegExp(pattern)));
  return re;
};

/** "9.3.0" before "10.2.1": numeric parts compared as numbers. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(/[^0-9]+/).filter(Boolean).map(Number);
  const pb = b.split(/[^0-9]+/).filter(Boolean).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The compiler of `entries` (those offered) that builds `file` in `dialect` (none: a
 * request or a plain archive, runbox's own meaning of each extension).
 */
export function compilerForFile(entries: readonly (LanguageRecipe & Pick<CompilerEntry, 'id'>)[], file: LanguageFile, dialect?: Dialect): FileLanguage {
  const extension = extensionOf(file.name);
  if (extension === '') return { compiler: null, reason: 'it has no extension' };
  const byShebang = entries.filter((e) => e.shebang?.extensions.includes(extension) && shebangOf(e.shebang.pattern).test(file.firstLine));
  const byDialect = dialect ? entries.filter((e) => e.dialects?.[dialect]?.includes(extension)) : [];
  const general = entries.filter((e) => languageExtensions(e).includes(extension) && !e.shebang?.extensions.includes(extension));
  const claims = [byShebang, byDialect, general].find((c) => c.length > 0) ?? [];
  const languages = [...new Set(claims.map((e) => e.language))];
  if (languages.length === 0) return { compiler: null, reason: `no language offered here takes ${extension} files` };
  if (languages.length > 1) return { compiler: null, reason: `${extension} is ${languages.sort().join(' or ')} here${dialect ? ` (in ${dialect} packages too)` : ''}` };
  // Ids of one toolchain differ by the standard they compile at (g++-4.9 and g++-9 are both
  // GCC 9 here, at GNU++98 and GNU++14): the id with the higher version in its name wins.
  const newest = [...claims].sort((a, b) => compareVersions(b.version, a.version) || compareVersions(b.id, a.id) || a.id.localeCompare(b.id))[0]!;
  return { compiler: newest.id, language: newest.language };
}

/** Recipe languages whose code in the problem package format's languages table is another word. */
const PACKAGE_LANGUAGE_CODES: Record<string, string> = {
  'c++': 'cpp',
  clang: 'c',
  'clang++': 'cpp',
  'objective-c': 'objectivec',
  'common lisp': 'lisp',
  'csharp.net': 'csharp',
  'fsharp.net': 'fsharp',
};

/**
 * A compiler's language as the problem package format names it (its appendix's
 * languages table: c, cpp, java, python3, ...), as a package's include/<language>/ does.
 */
export function packageLanguageCode(recipe: Pick<LanguageRecipe, 'language' | 'version'>): string {
  if (recipe.language === 'python') return recipe.version.startsWith('2') ? 'python2' : 'python3';
  return PACKAGE_LANGUAGE_CODES[recipe.language] ?? recipe.language;
}
