import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { catalogue } from './catalogue.js';
import { COMPILER_IDS, type CompilerId } from './ids.js';

// Which identifiers this deployment can run: those whose image is installed under
// RUNBOX_IMAGES_DIR (<dir>/<image>/manifest.json beside <dir>/<image>/rootfs).

export interface ImageManifest {
  image: string;
  suite: string;
  recipeHash: string;
  digest: string;
  builtAt: string;
  compilers: Record<string, { version: string }>;
}

export interface CompilerAvailability {
  id: CompilerId;
  language: string | null;
  image: string | null;
  version: string | null;
  available: boolean;
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

export function compilerAvailability(imagesDir: string): CompilerAvailability[] {
  const cat = catalogue();
  return COMPILER_IDS.map((id) => {
    const entry = cat.get(id);
    const manifest = entry ? readManifest(imagesDir, entry.image) : undefined;
    const version = manifest?.compilers[id]?.version ?? null;
    return { id, language: entry?.language ?? null, image: entry?.image ?? null, version, available: version !== null };
  });
}
