import { readManifest } from '../compilers/availability.js';
import { catalogue, whollyRetired } from '../compilers/catalogue.js';
import { builtFrom } from './recipes.js';

// `image catalogue`: every recipe the service knows, built or not, with its languages,
// and the operator's recipes it refused.

export interface CatalogueImage {
  image: string;
  origin: 'built-in' | 'operator';
  file: string;
  suite: string;
  default: boolean;
  /** not built: no image installed; stale: built from an older recipe; retired: no longer built. */
  state: 'up to date' | 'stale' | 'not built' | 'retired';
  compilers: {
    id: string;
    language: string;
    /** The version the recipe states; `installed` is what the built image's probe found. */
    version: string;
    installed: string | null;
    piston: string | null;
    judge0: number | null;
    successor?: string;
  }[];
}

export function catalogueList(imagesDir: string, recipesDir: string): { images: CatalogueImage[]; problems: { file: string; problem: string }[] } {
  const cat = catalogue(recipesDir);
  const images = cat.recipes.map(({ recipe, origin, file }): CatalogueImage => {
    const manifest = readManifest(imagesDir, recipe.image);
    const state = whollyRetired(recipe) ? 'retired' : !manifest ? 'not built' : builtFrom(manifest.recipeHash, recipe) ? 'up to date' : 'stale';
    return {
      image: recipe.image,
      origin,
      file,
      suite: recipe.suite,
      default: recipe.default === true,
      state,
      compilers: Object.entries(recipe.compilers).map(([id, c]) => ({
        id,
        language: c.language,
        version: c.version,
        installed: manifest?.compilers[id]?.version ?? null,
        piston: c.piston?.language ?? null,
        judge0: c.judge0?.id ?? null,
        ...(c.retired ? { successor: c.retired.successor } : {}),
      })),
    };
  });
  return { images, problems: cat.problems };
}
