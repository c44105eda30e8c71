import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogue, type CompilerEntry } from './catalogue.js';

// Which identifiers this deployment can run: those whose image is installed under
// RUNBOX_IMAGES_DIR (<dir>/<image>/manifest.json beside <dir>/<image>/rootfs).

export interface ImageManifest {
  image: string;
  suite: string;
  recipeHash: string;
  digest: string;
  builtAt: string;
  /** Per compiler: the probed toolchain version and, where the recipe ships some, each library's. */
  compilers: Record<string, { version: string; libraries?: Record<string, string> }>;
}

export interface CompilerAvailability {
  id: string;
  language: string;
  image: string;
  /** The installed toolchain's version (the image's manifest); null when not installed. */
  version: string | null;
  /** Installed and not retired. */
  available: boolean;
  /** Library name → version installed with it (probed at build time); empty when none or not available. */
  libraries: Record<string, string>;
  entry: CompilerEntry;
}

/** One catalogue entry with the version a deployment has installed (null: none). */
export function availabilityOf(entry: CompilerEntry, version: string | null, libraries: Record<string, string> = {}): CompilerAvailability {
  // A retired id is never offered, even where an old image still holds it.
  const installed = entry.retired ? null : version;
  return { id: entry.id, language: entry.language, image: entry.image, version: installed, available: installed !== null, libraries: installed === null ? {} : libraries, entry };
}

export function imageRootfs(imagesDir: string, image: string): string {
  return join(imagesDir, image, 'rootfs');
}

export function readManifest(imagesDir: string, image: string): ImageManifest | undefined {
  try {
    return JSON.parse(readFileSync(join(imagesDir, image, 'manifest.json'), 'utf8')) as ImageManifest;
  } catch {
    return undefined;
  }
}

/** Every compiler of the catalogue (built-in and `recipesDir`'s), with what `imagesDir` holds. */
export function compilerAvailability(imagesDir: string, recipesDir = ''): CompilerAvailability[] {
  const manifests = new Map<string, ImageManifest | undefined>();
  return [...catalogue(recipesDir).entries.values()].map((entry) => {
    if (!manifests.has(entry.image)) manifests.set(entry.image, readManifest(imagesDir, entry.image));
    const installed = manifests.get(entry.image)?.compilers[entry.id];
    return availabilityOf(entry, installed?.version ?? null, installed?.libraries);
  });
}
