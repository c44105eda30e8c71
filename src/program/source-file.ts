import type { CompilerRecipe } from '../compilers/recipe.js';

// Where a program sent as `code` goes in the workspace (the recipe's source name, or
// for Java the name of its one public class), and the source with its comments and
// literals blanked, for the scans that look for a declaration (plan.ts).

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
