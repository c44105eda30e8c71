import type { CompilerRecipe } from '../compilers/recipe.js';

// Where the program's source goes in the workspace, and what `{main}` stands for in
// the run and artifact names.

const PUBLIC_CLASS = /\bpublic\s+(?:(?:final|abstract|strictfp)\s+)*class\s+([A-Za-z_][A-Za-z0-9_]*)/g;

export interface SourcePlacement {
  fileName: string;
  main: string;
}

/**
 * The source with comments and string and character literals blanked, so a `class`
 * inside them is not taken. One pass, each character looked at once: the source is
 * the client's (up to the code limit), and a backtracking pattern over it could take
 * seconds of the runner's event loop. An unterminated literal ends at its line's end
 * and an unterminated comment at the source's (javac reports both).
 */
export function codeOnly(code: string): string {
  const out: string[] = [];
  let kept = 0;
  const blank = (from: number, to: number) => {
    out.push(code.slice(kept, from), ' ');
    kept = to;
  };
  let i = 0;
  while (i < code.length) {
    const c = code[i];
    if (c === '/' && code[i + 1] === '*') {
      const close = code.indexOf('*/', i + 2);
      const end = close === -1 ? code.length : close + 2;
      blank(i, end);
      i = end;
    } else if (c === '/' && code[i + 1] === '/') {
      const newline = code.indexOf('\n', i + 2);
      const end = newline === -1 ? code.length : newline;
      blank(i, end);
      i = end;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < code.length && code[j] !== c && code[j] !== '\n') j += code[j] === '\\' && code[j + 1] !== '\n' ? 2 : 1;
      const end = Math.min(code.length, code[j] === c ? j + 1 : j);
      blank(i, end);
      i = end;
    } else {
      i++;
    }
  }
  out.push(code.slice(kept));
  return out.join('');
}

export function placeSource(recipe: Pick<CompilerRecipe, 'source' | 'sourceFromPublicClass'>, code: string): SourcePlacement {
  const stem = recipe.source.replace(/\.[^.]*$/, '');
  if (!recipe.sourceFromPublicClass) return { fileName: recipe.source, main: stem };
  // Java requires a public class to live in a file of its name. With exactly one public
  // class we follow it; otherwise the recipe's default name stands and javac reports.
  const names = [...codeOnly(code).matchAll(PUBLIC_CLASS)].map((m) => m[1]!);
  if (names.length === 1) {
    const ext = recipe.source.slice(stem.length) || '.java';
    return { fileName: names[0]! + ext, main: names[0]! };
  }
  return { fileName: recipe.source, main: stem };
}

/** The source file's text: the program, after an empty first line where the interpreter skips one. */
export function sourceText(recipe: Pick<CompilerRecipe, 'skipsFirstLine'>, code: string): string {
  return recipe.skipsFirstLine === true && !code.startsWith('#!') ? `\n${code}` : code;
}

export function substituteMain(args: readonly string[], main: string): string[] {
  return args.map((a) => a.replaceAll('{main}', main));
}

/** The artifacts entry that stands for every class file javac may write. */
export const CLASS_FILES = '{classes}';
const MAX_CLASS_FILES = 1000;
/** Longest class file name a file system takes; a longer nested name cannot be written. */
const MAX_FILE_NAME_BYTES = 255;

/**
 * Names javac may give the class files of `code`: each declared class as
 * Outer$Inner.class, then Outer$1.class… for anonymous classes (up to the number of
 * `new` expressions), at most MAX_CLASS_FILES in all. A superset is fine: names that
 * were not written are simply not collected. The work is one pass over the source
 * plus at most MAX_CLASS_FILES names, whatever the numbers of classes and `new`s.
 */
export function javaClassFiles(code: string): string[] {
  const src = codeOnly(code);
  const anonymous = (src.match(/\bnew\b/g) ?? []).length;
  const names: string[] = [];
  // The classes whose bodies enclose the scan, innermost last, with the brace depth of
  // each body ('' for a class whose name is too long to be a file). Other blocks only
  // count in `depth`: nothing is kept per brace, however many a source opens.
  const classes: string[] = [];
  const bodyDepths: number[] = [];
  let depth = 0;
  let pending: string | undefined;
  const isWordChar = (c: number) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
  const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
  // A hand-written scan rather than a global pattern: no match object per brace.
  for (let i = 0; i < src.length; ) {
    const c = src.charCodeAt(i);
    if (isWordChar(c)) {
      let end = i + 1;
      while (end < src.length && isWordChar(src.charCodeAt(end))) end++;
      const word = src.slice(i, end);
      i = end;
      // `record` (Java 16) is a contextual keyword: `record instanceof R` is an expression.
      if (word !== 'class' && word !== 'interface' && word !== 'enum' && word !== 'record') continue;
      let at = i;
      while (at < src.length && isSpace(src.charCodeAt(at))) at++;
      if (at === i) continue;
      let nameEnd = at;
      while (nameEnd < src.length && isWordChar(src.charCodeAt(nameEnd))) nameEnd++;
      const name = src.slice(at, nameEnd);
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && name !== 'instanceof') pending = name;
      i = nameEnd;
      continue;
    }
    i++;
    if (c !== 123 && c !== 125) continue;
    if (c === 125) {
      if (depth > 0 && bodyDepths[bodyDepths.length - 1] === depth) {
        classes.pop();
        bodyDepths.pop();
      }
      depth = Math.max(0, depth - 1);
    } else if (pending === undefined) {
      depth++;
    } else {
      const top = classes.length - 1;
      const enclosing = top >= 0 ? classes[top]! : null;
      // A class declared inside a method body is Outer$1Name; a member class Outer$Name.
      const local = top >= 0 && bodyDepths[top] !== depth;
      let full = enclosing === null ? pending : enclosing === '' ? '' : `${enclosing}$${local ? '1' : ''}${pending}`;
      if (Buffer.byteLength(full) + '.class'.length > MAX_FILE_NAME_BYTES) full = '';
      if (full !== '' && names.length < MAX_CLASS_FILES) names.push(full);
      depth++;
      classes.push(full);
      bodyDepths.push(depth);
      pending = undefined;
    }
  }
  const files = new Set(names.map((n) => `${n}.class`));
  // Anonymous classes after every declared one, Outer$1 of each class before any Outer$2.
  for (let i = 1; i <= anonymous && names.length > 0 && files.size < MAX_CLASS_FILES; i++) {
    for (const cls of names) {
      if (files.size >= MAX_CLASS_FILES) break;
      if (Buffer.byteLength(cls) + `$${i}.class`.length <= MAX_FILE_NAME_BYTES) files.add(`${cls}$${i}.class`);
    }
  }
  return [...files].slice(0, MAX_CLASS_FILES);
}

/** Artifact names with `{main}` substituted and `{classes}` expanded. */
export function artifactNames(artifacts: readonly string[], main: string, code: string): string[] {
  return artifacts.flatMap((a) => (a === CLASS_FILES ? javaClassFiles(code) : substituteMain([a], main)));
}
