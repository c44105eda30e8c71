import { createHash } from 'node:crypto';
import { readManifest } from '../compilers/availability.js';
import { catalogue, defaultImages, whollyRetired } from '../compilers/catalogue.js';
import type { ImageRecipe } from '../compilers/recipe.js';

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
 * the .NET SDK copy, the links, and which compilers and libraries the manifest records with their
 * probes and packages (a probe's answer is written into the manifest). How a compiler compiles and runs a
 * program (compile, run, artifacts, source, env, hello, the stated version, the
 * description) is read from the recipe at run time, so editing it needs no rebuild.
 */
export function buildInputs(recipe: ImageRecipe): unknown {
  return {
    image: recipe.image,
    suite: recipe.suite,
    packages: recipe.packages,
    dotnetSdk: recipe.dotnetSdk === true,
    // Like libraries, links enter only where a recipe has some: no other image's hash changed.
    ...(recipe.links ? { links: recipe.links } : {}),
    // Libraries enter only where a compiler has some, so adding the field changed no other image's hash.
    compilers: Object.fromEntries(
      Object.entries(recipe.compilers).map(([id, c]) => [
        id,
        c.libraries ? { probe: c.probe, libraries: Object.fromEntries(Object.entries(c.libraries).map(([name, l]) => [name, { package: l.package, probe: l.probe }])) } : { probe: c.probe },
      ]),
    ),
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

/** The recipe of an image as the catalogue has it now (built-in or the operator's), or undefined when there is none. */
export function currentRecipe(image: string, recipesDir = ''): ImageRecipe | undefined {
  return catalogue(recipesDir).recipes.find((r) => r.recipe.image === image)?.recipe;
}

export interface SelectOptions {
  /** The images setup installs (recipes marked `default`). */
  defaults?: boolean;
  /** Every image of the catalogue not installed under `imagesDir`. */
  missing?: { imagesDir: string };
  /** The operator's recipes directory (config RUNBOX_RECIPES_DIR). */
  recipesDir?: string;
}

/**
 * Resolves build arguments to recipes: compiler identifiers (python-3.9.7), image names
 * (python3.9), `all`, the default set or the missing ones. Unknown names are an error,
 * listing what exists; so is an image whose every compiler is retired (no longer built).
 * `all` and `missing` leave such images out.
 */
export function selectRecipes(names: string[], opts: SelectOptions = {}): ImageRecipe[] {
  const cat = catalogue(opts.recipesDir ?? '');
  const recipes = cat.recipes.map((r) => r.recipe);
  const byImage = new Map(recipes.map((r) => [r.image, r]));
  const wanted = new Set<string>();
  if (opts.defaults) for (const image of defaultImages(cat)) wanted.add(image);
  if (opts.missing) {
    for (const r of recipes) if (!whollyRetired(r) && !readManifest(opts.missing.imagesDir, r.image)) wanted.add(r.image);
  }
  for (const name of names) {
    if (name === 'all') {
      for (const r of recipes) if (!whollyRetired(r)) wanted.add(r.image);
    } else if (byImage.has(name)) {
      if (whollyRetired(byImage.get(name)!)) throw new Error(`image ${name} is retired: its compilers are served by ${successorsOf(byImage.get(name)!)}`);
      wanted.add(name);
    } else if (cat.entries.has(name)) {
      const entry = cat.entries.get(name)!;
      if (entry.retired) throw new Error(`compiler ${name} is retired; build ${entry.retired.successor} instead`);
      wanted.add(entry.image);
    } else {
      throw new Error(`no recipe for ${JSON.stringify(name)}; images: ${[...byImage.keys()].join(', ')}`);
    }
  }
  return [...wanted].map((image) => byImage.get(image)!);
}

const successorsOf = (recipe: ImageRecipe): string =>
  [...new Set(Object.values(recipe.compilers).map((c) => c.retired!.successor))].join(', ');
