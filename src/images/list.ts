import { join } from 'node:path';
import { readManifest, type ImageManifest } from '../compilers/availability.js';
import { builtFrom, currentRecipe } from './recipes.js';
import { installedImages } from './store.js';
import { imageSize } from './size.js';

// `image list`: what is installed, and whether each image still matches its recipe.

export interface InstalledImage {
  image: string;
  /** up to date: built from today's recipe; stale: the recipe changed since; no recipe: imported, or its recipe removed (rootfs/ or RUNBOX_RECIPES_DIR). */
  state: 'up to date' | 'stale' | 'no recipe' | 'broken';
  suite?: string;
  compilers?: ImageManifest['compilers'];
  recipeHash?: string;
  digest?: string;
  builtAt?: string;
  sizeBytes?: number;
}

export async function listImages(imagesDir: string, recipesDir = ''): Promise<InstalledImage[]> {
  const out: InstalledImage[] = [];
  for (const image of await installedImages(imagesDir)) {
    const manifest = readManifest(imagesDir, image);
    if (!manifest) {
      out.push({ image, state: 'broken' });
      continue;
    }
    const recipe = currentRecipe(image, recipesDir);
    const state = recipe === undefined ? 'no recipe' : builtFrom(manifest.recipeHash, recipe) ? 'up to date' : 'stale';
    const sizeBytes = await imageSize(join(imagesDir, image), manifest.digest);
    out.push({
      image,
      state,
      suite: manifest.suite,
      compilers: manifest.compilers,
      recipeHash: manifest.recipeHash,
      digest: manifest.digest,
      builtAt: manifest.builtAt,
      sizeBytes,
    });
  }
  return out;
}
