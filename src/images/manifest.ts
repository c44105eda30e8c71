import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Type from 'typebox';
import { Compile } from 'typebox/compile';
import type { ImageManifest } from '../compilers/availability.js';

// manifest.json beside an image's rootfs. The shape is ImageManifest
// (src/compilers/availability.ts); this schema checks manifests that arrive from
// elsewhere (image import) before any field is used as a path or trusted.

const Hex64 = Type.String({ pattern: '^[0-9a-f]{64}$' });

const ManifestSchema = Type.Object({
  image: Type.String({ pattern: '^[a-z0-9][a-z0-9.+-]*$', maxLength: 64 }),
  suite: Type.String({ pattern: '^[a-z]+$', maxLength: 32 }),
  recipeHash: Hex64,
  digest: Hex64,
  builtAt: Type.String({ maxLength: 64 }),
  compilers: Type.Record(
    Type.String({ maxLength: 64 }),
    Type.Object({
      version: Type.String({ maxLength: 128 }),
      libraries: Type.Optional(Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 128 }), { maxProperties: 256 })),
    }),
  ),
});

const check = Compile(ManifestSchema);

export function parseManifest(text: string): ImageManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('manifest.json is not JSON');
  }
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    throw new Error(`manifest.json is invalid at ${first?.instancePath || '/'}: ${first?.message ?? 'bad value'}`);
  }
  return value as ImageManifest;
}

export async function writeManifest(dir: string, manifest: ImageManifest): Promise<void> {
  await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n', { mode: 0o644 });
}
