import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Compile } from 'typebox/compile';
import { RECIPES_DIR } from '../util/paths.js';
import { COMPILER_IDS, type CompilerId } from './ids.js';
import { ImageRecipe, type CompilerRecipe } from './recipe.js';

// The compiler catalogue: the one place that maps a compiler identifier to its image
// and its compile/run commands. Read from the recipes under rootfs/.

export interface CompilerEntry extends CompilerRecipe {
  id: CompilerId;
  image: string;
}

const checkRecipe = Compile(ImageRecipe);

export function loadRecipes(dir: string = RECIPES_DIR): ImageRecipe[] {
  const recipes: ImageRecipe[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.json')).sort()) {
    const value: unknown = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    if (!checkRecipe.Check(value)) {
      const first = [...checkRecipe.Errors(value)][0];
      throw new Error(`rootfs/${name}: invalid recipe at ${first?.instancePath || '/'}: ${first?.message ?? 'unknown error'}`);
    }
    if (`${value.image}.json` !== name) throw new Error(`rootfs/${name}: image name must match the file name`);
    recipes.push(value);
  }
  return recipes;
}

let cached: Map<CompilerId, CompilerEntry> | undefined;

/** Every identifier that has a recipe, with its image. */
export function catalogue(): Map<CompilerId, CompilerEntry> {
  if (cached) return cached;
  const map = new Map<CompilerId, CompilerEntry>();
  for (const recipe of loadRecipes()) {
    for (const [id, compiler] of Object.entries(recipe.compilers)) {
      if (!(COMPILER_IDS as readonly string[]).includes(id)) {
        throw new Error(`rootfs/${recipe.image}.json: unknown compiler identifier ${id}`);
      }
      if (map.has(id as CompilerId)) throw new Error(`compiler ${id} is served by two recipes`);
      map.set(id as CompilerId, { ...compiler, id: id as CompilerId, image: recipe.image });
    }
  }
  cached = map;
  return map;
}

export function compilerEntry(id: CompilerId): CompilerEntry | undefined {
  return catalogue().get(id);
}

/** Images that setup builds by default, so a fresh host can run programs and the tests. */
export const DEFAULT_IMAGES = ['python3.9', 'gcc'] as const;
