import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogue, DEFAULT_IMAGES, loadRecipes } from '../compilers/catalogue.js';
import { isCompilerId } from '../compilers/ids.js';
import type { ImageRecipe } from '../compilers/recipe.js';
import { RECIPES_DIR } from '../util/paths.js';

// Which recipes a build names, and the hash that says whether an installed image
// still matches its recipe.

/** Image names are path components under the images directory: keep them plain. */
export const IMAGE_NAME = /^[a-z0-9][a-z0-9.+-]*$/;

export function assertImageName(name: string): void {
  if (!IMAGE_NAME.test(name) || name.length > 64) throw new Error(`invalid image name ${JSON.stringify(name)}`);
}

/** JSON with sorted keys and no whitespace: formatting and key order do not change the hash. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The part of a recipe that the built image depends on: the Debian suite and packages,
 * the .NET SDK copy, and which compilers the manifest records with their probes (a
 * probe's answer is written into the manifest). How a compiler compiles and runs a
 * program (compile, run, artifacts, source, env, hello, the stated version, the
 * description) is read from the recipe at run time, so editing it needs no rebuild.
 */
export function buildInputs(recipe: ImageRecipe): unknown {
  return {
    image: recipe.image,
    suite: recipe.suite,
    packages: recipe.packages,
    dotnetSdk: recipe.dotnetSdk === true,
    compilers: Object.fromEntries(Object.entries(recipe.compilers).map(([id, c]) => [id, { probe: c.probe }])),
  };
}

/** The hash an image's manifest records: of buildInputs, canonically. */
export function recipeHash(recipe: ImageRecipe): string {
  return createHash('sha256').update(canonicalJson(buildInputs(recipe))).digest('hex');
}

/** Images built before the hash covered only buildInputs recorded the whole recipe's. */
function wholeRecipeHash(recipe: ImageRecipe): string {
  return createHash('sha256').update(canonicalJson(recipe)).digest('hex');
}

/** Whether an image whose manifest records `hash` was built from what `recipe` asks for now. */
export function builtFrom(hash: string, recipe: ImageRecipe): boolean {
  return hash === recipeHash(recipe) || hash === wholeRecipeHash(recipe);
}

/** rootfs/<image>.json as it is on disk now, or undefined when there is none. */
export function currentRecipe(image: string, dir: string = RECIPES_DIR): ImageRecipe | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, `${image}.json`), 'utf8')) as ImageRecipe;
  } catch {
    return undefined;
  }
}

/**
 * Resolves build arguments to recipes: compiler identifiers (python-3.9.7), image names
 * (python3.9), `all`, or the default set. Unknown names are an error, listing what exists.
 */
export function selectRecipes(names: string[], opts: { defaults?: boolean; dir?: string } = {}): ImageRecipe[] {
  const recipes = loadRecipes(opts.dir);
  const byImage = new Map(recipes.map((r) => [r.image, r]));
  const wanted = new Set<string>();
  if (opts.defaults) for (const image of DEFAULT_IMAGES) wanted.add(image);
  for (const name of names) {
    if (name === 'all') {
      for (const r of recipes) wanted.add(r.image);
    } else if (byImage.has(name)) {
      wanted.add(name);
    } else if (isCompilerId(name) && catalogue().has(name)) {
      wanted.add(catalogue().get(name)!.image);
    } else {
      throw new Error(`no recipe for ${JSON.stringify(name)}; images: ${[...byImage.keys()].join(', ')}`);
    }
  }
  return [...wanted].map((image) => {
    const recipe = byImage.get(image);
    if (!recipe) throw new Error(`no recipe rootfs/${image}.json`);
    return recipe;
  });
}
