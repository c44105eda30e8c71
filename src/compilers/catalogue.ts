import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Compile } from 'typebox/compile';
import { RECIPES_DIR } from '../util/paths.js';
import { INTERFACE_IDS } from './ids.js';
import { IMAGE_PATH, ImageRecipe, LIBRARY_NAME, MAX_LIBRARY_NAME_LENGTH, type CompilerRecipe } from './recipe.js';

// The compiler catalogue: the one place that maps a compiler identifier to its image,
// its compile/run commands and its names in the compatible APIs. Read from the
// built-in recipes (rootfs/) and, when configured, the operator's recipes directory
// (RUNBOX_RECIPES_DIR), which is re-read when its files change.

export interface CompilerEntry extends CompilerRecipe {
  id: string;
  image: string;
}

export type RecipeOrigin = 'built-in' | 'operator';

export interface CatalogueRecipe {
  recipe: ImageRecipe;
  origin: RecipeOrigin;
  file: string;
}

export interface Catalogue {
  /** Every compiler identifier: the interface document's ten first, in its order, then the others by id. */
  entries: Map<string, CompilerEntry>;
  /** Every recipe in use, the built-in ones first. */
  recipes: CatalogueRecipe[];
  /** Operator recipes refused, and why (the built-in set is never refused: it must be valid). */
  problems: { file: string; problem: string }[];
}

/** Compiler identifiers: `<language>-<version>`, plain enough for URLs, file names and logs. */
export const COMPILER_ID = /^[a-z0-9][a-z0-9.+#_-]*$/;
const MAX_ID_LENGTH = 64;

const checkRecipe = Compile(ImageRecipe);

/** One recipe file, checked against the schema and its file name; throws saying what is wrong. */
export function readRecipeFile(path: string, name: string): ImageRecipe {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`${name}: not readable as JSON: ${(err as Error).message}`);
  }
  if (!checkRecipe.Check(value)) {
    const first = [...checkRecipe.Errors(value)][0];
    throw new Error(`${name}: invalid recipe at ${first?.instancePath || '/'}: ${first?.message ?? 'unknown error'}`);
  }
  if (`${value.image}.json` !== name) throw new Error(`${name}: image name must match the file name`);
  for (const path of Object.keys(value.links ?? {})) {
    if (!IMAGE_PATH.test(path)) throw new Error(`${name}: link ${JSON.stringify(path)} must be an absolute path of plain components (${IMAGE_PATH.source})`);
  }
  for (const id of Object.keys(value.compilers)) {
    if (!COMPILER_ID.test(id) || id.length > MAX_ID_LENGTH) {
      throw new Error(`${name}: compiler identifier ${JSON.stringify(id)} must match ${COMPILER_ID.source} (at most ${MAX_ID_LENGTH} characters)`);
    }
    if (value.compilers[id]!.check && value.compilers[id]!.compile) throw new Error(`${name}: ${id} has a compile stage, so no check: check is the syntax check of a language without one`);
    const { shebang, entry } = value.compilers[id]!;
    if (entry && (entry.missing === undefined) === (entry.otherwise === undefined)) throw new Error(`${name}: the entry of ${id} needs either missing (a program without one is a compile error) or otherwise (what {entry} is then)`);
    const patterns: [string, string | undefined][] = [['shebang pattern', shebang?.pattern], ['entry main', entry?.main], ['entry scopes', entry?.scopes]];
    for (const [what, pattern] of patterns) {
      const problem = pattern === undefined ? undefined : regexProblem(pattern);
      if (problem) throw new Error(`${name}: the ${what} of ${id} is not a regular expression: ${problem}`);
    }
    for (const library of Object.keys(value.compilers[id]!.libraries ?? {})) {
      if (!LIBRARY_NAME.test(library) || library.length > MAX_LIBRARY_NAME_LENGTH) {
        throw new Error(`${name}: library name ${JSON.stringify(library)} of ${id} must match ${LIBRARY_NAME.source} (at most ${MAX_LIBRARY_NAME_LENGTH} characters)`);
      }
    }
  }
  return value;
}

/** Why a recipe's pattern is not a regular expression, or undefined. */
function regexProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

const recipeFiles = (dir: string): string[] => readdirSync(dir).filter((n) => n.endsWith('.json')).sort();

/** The recipes of one directory, every one valid (throws on the first that is not). */
export function loadRecipes(dir: string = RECIPES_DIR): ImageRecipe[] {
  return recipeFiles(dir).map((name) => readRecipeFile(join(dir, name), name));
}

function order(ids: string[]): string[] {
  const first = (INTERFACE_IDS as readonly string[]).filter((id) => ids.includes(id));
  return [...first, ...ids.filter((id) => !first.includes(id)).sort()];
}

/**
 * Joins recipes into a catalogue. A built-in recipe that clashes (an image name,
 * compiler id or Judge0 id twice, a successor that does not exist) is an error; an
 * operator recipe that clashes is left out and reported, so one bad file dropped into
 * the directory cannot take the service's other languages down.
 */
export function buildCatalogue(builtIn: CatalogueRecipe[], operator: (CatalogueRecipe | { file: string; error: string })[]): Catalogue {
  const recipes: CatalogueRecipe[] = [];
  const problems: Catalogue['problems'] = [];
  const byId = new Map<string, CompilerEntry>();
  const judge0 = new Map<number, string>();
  const refuse = (r: { file: string; origin?: RecipeOrigin }, problem: string): void => {
    if (r.origin === 'built-in') throw new Error(`${r.file}: ${problem}`);
    problems.push({ file: r.file, problem });
  };
  for (const r of [...builtIn, ...operator]) {
    if ('error' in r) {
      problems.push({ file: r.file, problem: r.error });
      continue;
    }
    const clash = clashOf(r.recipe, recipes, byId, judge0);
    if (clash) {
      refuse(r, clash);
      continue;
    }
    recipes.push(r);
    for (const [id, compiler] of Object.entries(r.recipe.compilers)) {
      byId.set(id, { ...compiler, id, image: r.recipe.image });
      if (compiler.judge0) judge0.set(compiler.judge0.id, id);
    }
  }
  // Successors are checked once every recipe is in: a successor may come later.
  for (const r of [...recipes]) {
    const missing = Object.entries(r.recipe.compilers).find(([, c]) => c.retired && !byId.has(c.retired.successor));
    if (!missing) continue;
    refuse(r, `compiler ${missing[0]} is retired in favour of ${missing[1].retired!.successor}, which no recipe serves`);
    recipes.splice(recipes.indexOf(r), 1);
    for (const id of Object.keys(r.recipe.compilers)) byId.delete(id);
  }
  const entries = new Map(order([...byId.keys()]).map((id) => [id, byId.get(id)!]));
  return { entries, recipes, problems };
}

function clashOf(recipe: ImageRecipe, taken: CatalogueRecipe[], byId: Map<string, CompilerEntry>, judge0: Map<number, string>): string | undefined {
  if (taken.some((t) => t.recipe.image === recipe.image)) return `image ${recipe.image} is already defined by ${taken.find((t) => t.recipe.image === recipe.image)!.file}`;
  const seen = new Set<number>();
  for (const [id, c] of Object.entries(recipe.compilers)) {
    if (byId.has(id)) return `compiler ${id} is already served by image ${byId.get(id)!.image}`;
    if (c.judge0) {
      const other = judge0.get(c.judge0.id);
      if (other !== undefined || seen.has(c.judge0.id)) return `Judge0 id ${c.judge0.id} of ${id} is already used by ${other ?? 'another compiler of this recipe'}`;
      seen.add(c.judge0.id);
    }
  }
  return undefined;
}

function readOperatorDir(dir: string): (CatalogueRecipe | { file: string; error: string })[] {
  let names: string[];
  try {
    names = recipeFiles(dir);
  } catch (err) {
    return [{ file: dir, error: `cannot read the recipes directory: ${(err as Error).message}` }];
  }
  return names.map((name) => {
    const file = join(dir, name);
    try {
      return { recipe: readRecipeFile(file, name), origin: 'operator' as const, file };
    } catch (err) {
      return { file, error: (err as Error).message };
    }
  });
}

/** What says whether the operator's directory changed: its files' names, sizes and times. */
function dirStamp(dir: string): string {
  try {
    return recipeFiles(dir)
      .map((name) => {
        const st = statSync(join(dir, name));
        return `${name}:${st.size}:${st.mtimeMs}`;
      })
      .join('|');
  } catch (err) {
    return `unreadable:${(err as Error).message}`;
  }
}

/** How long a process trusts its view of the operator's directory before looking again. */
const RECHECK_MS = 1000;

let builtInRecipes: CatalogueRecipe[] | undefined;
const cached = new Map<string, { stamp: string; checkedAt: number; catalogue: Catalogue }>();

/**
 * The catalogue of the built-in recipes and, when `operatorDir` is given (config
 * RUNBOX_RECIPES_DIR), the operator's: re-read when the directory's files change,
 * looked at no more than once a second.
 */
export function catalogue(operatorDir = ''): Catalogue {
  builtInRecipes ??= recipeFiles(RECIPES_DIR).map((name) => ({
    recipe: readRecipeFile(join(RECIPES_DIR, name), name),
    origin: 'built-in' as const,
    file: `rootfs/${name}`,
  }));
  const known = cached.get(operatorDir);
  const now = performance.now();
  if (known && (operatorDir === '' || now - known.checkedAt < RECHECK_MS)) return known.catalogue;
  const stamp = operatorDir === '' ? '' : dirStamp(operatorDir);
  if (known && known.stamp === stamp) {
    known.checkedAt = now;
    return known.catalogue;
  }
  const built = buildCatalogue(builtInRecipes, operatorDir === '' ? [] : readOperatorDir(operatorDir));
  cached.set(operatorDir, { stamp, checkedAt: now, catalogue: built });
  return built;
}

export function compilerEntry(id: string, operatorDir = ''): CompilerEntry | undefined {
  return catalogue(operatorDir).entries.get(id);
}

/** The identifiers a request may name and get a run (not retired), in the catalogue's order. */
export function offeredIds(cat: Catalogue): string[] {
  return [...cat.entries.values()].filter((e) => !e.retired).map((e) => e.id);
}

/** Images that setup and `image build --default` build (recipes marked `default`), so a fresh host can run programs and the tests. */
export function defaultImages(cat: Catalogue = catalogue()): string[] {
  return cat.recipes.filter((r) => r.recipe.default === true).map((r) => r.recipe.image);
}

/** Whether every compiler of a recipe is retired: its image is no longer built. */
export const whollyRetired = (recipe: ImageRecipe): boolean => Object.values(recipe.compilers).every((c) => c.retired !== undefined);
