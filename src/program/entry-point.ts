import type { CompilerRecipe } from '../compilers/recipe.js';
import { codeOnly } from './source-file.js';

// Which class a JVM program runs, found in its sources as DOMjudge and Kattis find it
// rather than taken from a file's name: Java's class that declares `public static void
// main`, Scala's object with a `main` (or that extends App), Kotlin's file with a
// top-level `fun main` (its `…Kt` class). The recipe's `entry` says it in data: what
// declares the entry point, which declarations open a named scope, and the name the run
// stage gets; this scan only follows braces. Comments and literals are blanked first
// (codeOnly), so a `main` in them does not count.

export type EntryRecipe = NonNullable<CompilerRecipe['entry']>;

export interface EntrySource {
  name: string;
  code: string;
}

/** Where the entry point is: the file, the package it declares, and its enclosing scopes (outermost first). */
export interface EntryFound {
  file: string;
  package: string;
  scopes: string[];
}

const PACKAGE = /(?:^|[;}\s])package\s+([A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*)/m;

const patterns = new Map<string, RegExp>();
const global = (source: string): RegExp => {
  let re = patterns.get(source);
  if (!re) patterns.set(source, (re = new RegExp(source, 'gm')));
  re.lastIndex = 0;
  return re;
};

/** The package a source declares (`package a.b;`, Kotlin's and Scala's without the semicolon), '' when none; its code blanked already. */
export function declaredPackage(blanked: string): string {
  const found = PACKAGE.exec(blanked);
  return found ? found[1]!.replace(/\s+/g, '') : '';
}

/** The entry point in one source (its code blanked), or undefined. One pass over the
 *  source, the recipe's matches merged in by position, so a long source costs little. */
function entryIn(recipe: EntryRecipe, blanked: string): string[] | undefined {
  const scopes = recipe.scopes ? [...blanked.matchAll(global(recipe.scopes))].map((m) => ({ at: m.index, name: m[1] ?? '' })) : [];
  const mains = [...blanked.matchAll(global(recipe.main))].map((m) => m.index);
  if (mains.length === 0) return undefined;
  // Each open brace: the scope it opens, or null (a method body, a block, an anonymous class).
  const stack: (string | null)[] = [];
  let pending: string | null = null;
  let s = 0;
  let m = 0;
  const named = () => stack.filter((x): x is string => x !== null);
  for (let i = 0; i <= blanked.length && m < mains.length; i++) {
    while (s < scopes.length && scopes[s]!.at === i) pending = scopes[s++]!.name;
    if (mains[m] === i) {
      m++;
      if (recipe.topLevel) {
        if (stack.length === 0) return [];
      } else if (pending !== null) {
        // Declared before the scope's brace (Scala's `object Main extends App {`).
        return [...named(), pending];
      } else if (stack.length > 0 && stack[stack.length - 1] !== null) {
        return named();
      }
    }
    const c = blanked[i];
    if (c === '{') {
      stack.push(pending);
      pending = null;
    } else if (c === '}') stack.pop();
    else if (c === ';') pending = null;
  }
  return undefined;
}

/** The entry point among the program's sources: the main file's first, then the others in order; undefined when none has one. */
export function findEntry(recipe: EntryRecipe, sources: readonly EntrySource[]): EntryFound | undefined {
  for (const source of sources) {
    const blanked = codeOnly(source.code);
    const scopes = entryIn(recipe, blanked);
    if (scopes) return { file: source.name, package: declaredPackage(blanked), scopes };
  }
  return undefined;
}
