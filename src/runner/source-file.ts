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
