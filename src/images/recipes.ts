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

export function recipeHash(recipe: ImageRecipe): string {
  return createHash('sha256').update(canonicalJson(recipe)).digest('hex');
}

/** The hash of rootfs/<image>.json as it is on disk now, or undefined when there is no recipe. */
export function currentRecipeHash(image: string, dir: string = RECIPES_DIR): string | undefined {
  try {
    return recipeHash(JSON.parse(readFileSync(join(dir, `${image}.json`), 'utf8')) as ImageRecipe);
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
