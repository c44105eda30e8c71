import type { CompilerRecipe } from '../compilers/recipe.js';

// Where the program's source goes in the workspace, and what `{main}` stands for in
// the run and artifact names.

const PUBLIC_CLASS = /\bpublic\s+(?:(?:final|abstract|strictfp)\s+)*class\s+([A-Za-z_][A-Za-z0-9_]*)/g;

export interface SourcePlacement {
  fileName: string;
  main: string;
}

/** Strips comments and string literals so a `public class` inside them is not taken. */
function codeOnly(code: string): string {
  return code.replace(/\/\*[\s\S]*?\*\/|\/\/[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'/g, ' ');
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

export function substituteMain(args: readonly string[], main: string): string[] {
  return args.map((a) => a.replaceAll('{main}', main));
}

/** The artifacts entry that stands for every class file javac may write. */
export const CLASS_FILES = '{classes}';
const MAX_CLASS_FILES = 1000;

/**
 * Names javac may give the class files of `code`: each declared class as
 * Outer$Inner.class, plus Outer$1.class… for anonymous classes (up to the number of
 * `new` expressions). A superset is fine: names that were not written are simply not
 * collected.
 */
export function javaClassFiles(code: string): string[] {
  const src = codeOnly(code);
  const names = new Set<string>();
  const anonymous = (src.match(/\bnew\b/g) ?? []).length;
  // Each open brace: the class it opens, or null for any other block.
  const stack: (string | null)[] = [];
  let pending: string | undefined;
  // `record` (Java 16) is a contextual keyword: `record instanceof R` is an expression.
  const token = /\b(?:class|interface|enum|record)\s+(?!instanceof\b)([A-Za-z_][A-Za-z0-9_]*)|[{}]/g;
  for (const m of src.matchAll(token)) {
    if (m[1]) {
      pending = m[1];
    } else if (m[0] === '{') {
      if (pending !== undefined) {
        const enclosing = [...stack].reverse().find((n) => n !== null);
        // A class declared inside a method body is Outer$1Name; a member class Outer$Name.
        const local = stack.length > 0 && stack[stack.length - 1] === null;
        const full = enclosing ? `${enclosing}$${local ? '1' : ''}${pending}` : pending;
        names.add(full);
        stack.push(full);
        pending = undefined;
      } else {
        stack.push(null);
      }
    } else {
      stack.pop();
    }
  }
  const files: string[] = [];
  for (const cls of names) {
    files.push(`${cls}.class`);
    for (let i = 1; i <= anonymous; i++) files.push(`${cls}$${i}.class`);
  }
  return [...new Set(files)].slice(0, MAX_CLASS_FILES);
}

/** Artifact names with `{main}` substituted and `{classes}` expanded. */
export function artifactNames(artifacts: readonly string[], main: string, code: string): string[] {
  return artifacts.flatMap((a) => (a === CLASS_FILES ? javaClassFiles(code) : substituteMain([a], main)));
}
