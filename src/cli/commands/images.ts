import { execa } from 'execa';
import { resolve } from 'node:path';
import { debianMirror } from '../../images/apt-sources.js';
import type { Compression } from '../../images/archive.js';
import { abandonBuilds, buildImage, type BuildResult } from '../../images/build.js';
import { importCaps, importImage } from '../../images/import.js';
import { catalogueList } from '../../images/catalogue-list.js';
import { listImages } from '../../images/list.js';
import { packImage } from '../../images/pack.js';
import { assertImageName, selectRecipes } from '../../images/recipes.js';
import { removeImage } from '../../images/store.js';
import { removeStaleWorkDirs } from '../../images/work-dirs.js';
import { type Command, UsageError } from '../command.js';

// runbox-admin image …: build, list, remove, pack and import compiler images.

const progress = (line: string) => process.stderr.write(`${line}\n`);

function oneImage(positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError('name exactly one image');
  const image = positionals[0]!;
  try {
    assertImageName(image);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return image;
}

async function zstdAvailable(): Promise<boolean> {
  const r = await execa('zstd', ['--version'], { reject: false, stdin: 'ignore' });
  return r.exitCode === 0;
}

export const imageCommands: Command[] = [
  {
    name: 'image build',
    summary: 'Build images from their recipes (rootfs/ and RUNBOX_RECIPES_DIR): compiler ids, image names, all, --default or --missing; skips up-to-date ones.',
    help: [
      '  <id|image|all>…  what to build: compiler identifiers (gcc-4.9), image names (gcc) or all',
      '  --default        the images setup installs (recipes marked "default": python3.9, gcc)',
      '  --missing        every image of the catalogue that is not installed (see image catalogue)',
      '  --force          rebuild even when the installed image matches its recipe',
    ].join('\n'),
    options: { default: { type: 'boolean' }, missing: { type: 'boolean' }, force: { type: 'boolean' } },
    allowPositionals: true,
    run: async ({ values, positionals, config }) => {
      if (!positionals.length && !values.default && !values.missing) throw new UsageError('name what to build (ids, images, all) or pass --default or --missing');
      const recipes = selectRecipes(positionals, {
        defaults: values.default === true,
        ...(values.missing ? { missing: { imagesDir: config.RUNBOX_IMAGES_DIR } } : {}),
        recipesDir: config.RUNBOX_RECIPES_DIR,
      });
      if (recipes.length === 0) progress('nothing to build: every image of the catalogue is installed');
      // An interrupted build removes its half-made tree instead of leaving it in the images directory.
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        process.once(signal, () => {
          progress(`${signal}: removing unfinished builds`);
          void abandonBuilds(progress).finally(() => process.exit(130));
        });
      }
      // One image failing does not stop the others; the command still fails at the end.
      const results: (BuildResult | { image: string; status: 'failed'; error: string })[] = [];
      for (const recipe of recipes) {
        try {
          results.push(
            await buildImage(recipe, {
              imagesDir: config.RUNBOX_IMAGES_DIR,
              mirror: () => debianMirror(config.RUNBOX_DEBIAN_MIRROR),
              force: values.force === true,
              log: progress,
            }),
          );
        } catch (err) {
          progress(`${recipe.image}: FAILED: ${(err as Error).message}`);
          results.push({ image: recipe.image, status: 'failed', error: (err as Error).message });
        }
      }
      const failed = results.filter((r) => r.status === 'failed').map((r) => r.image);
      if (failed.length) {
        process.stdout.write(JSON.stringify(results, null, 2) + '\n');
        throw new Error(`could not build ${failed.join(', ')}`);
      }
      return results;
    },
  },
  {
    name: 'image clean',
    summary: 'Remove the work directories (.build-*, .import-*) that killed builds and imports left behind; running ones are kept.',
    run: async ({ config }) => ({ removed: await removeStaleWorkDirs(config.RUNBOX_IMAGES_DIR, progress) }),
  },
  {
    name: 'image catalogue',
    summary: 'Every known recipe (rootfs/ and RUNBOX_RECIPES_DIR), built or not, with its compilers, languages, Piston names and Judge0 ids; and the operator recipes refused, with why.',
    run: async ({ config }) => catalogueList(config.RUNBOX_IMAGES_DIR, config.RUNBOX_RECIPES_DIR),
  },
  {
    name: 'image list',
    summary: 'Installed images: compilers, versions, recipe hash, up to date or stale, size.',
    run: async ({ config }) => listImages(config.RUNBOX_IMAGES_DIR, config.RUNBOX_RECIPES_DIR),
  },
  {
    name: 'image remove',
    summary: 'Remove an installed image (every stored version of it).',
    help: '  <image>   the image name (see image list)',
    allowPositionals: true,
    run: async ({ positionals, config }) => {
      const image = oneImage(positionals);
      if (!(await removeImage(config.RUNBOX_IMAGES_DIR, image))) throw new Error(`image ${image} is not installed`);
      return { removed: image };
    },
  },
  {
    name: 'image pack',
    summary: 'Write an installed image as a portable archive (tar + zstd, or gzip) for `image import` on runner hosts.',
    help: [
      '  <image>        the image name',
      '  --out FILE     archive to write (default: <image>.tar.zst or .tar.gz in the current directory)',
      '  --gzip         compress with gzip instead of zstd (used anyway when zstd is not installed)',
      '  --plain        no compression',
    ].join('\n'),
    options: { out: { type: 'string' }, gzip: { type: 'boolean' }, plain: { type: 'boolean' } },
    allowPositionals: true,
    run: async ({ positionals, values, config }) => {
      const image = oneImage(positionals);
      const compression: Compression = values.plain ? 'none' : values.gzip || !(await zstdAvailable()) ? 'gzip' : 'zstd';
      const ext = { zstd: '.tar.zst', gzip: '.tar.gz', none: '.tar' }[compression];
      const out = resolve(typeof values.out === 'string' && values.out ? values.out : `${image}${ext}`);
      progress(`packing ${image} into ${out} (${compression})`);
      return packImage(config.RUNBOX_IMAGES_DIR, image, out, compression);
    },
  },
  {
    name: 'image import',
    summary: 'Install an image archive made by `image pack` (plain, gzip or zstd), checking every entry and the digest.',
    help: '  <file>   the archive',
    allowPositionals: true,
    run: async ({ positionals, config }) => {
      if (positionals.length !== 1) throw new UsageError('name exactly one archive file');
      return importImage(resolve(positionals[0]!), config.RUNBOX_IMAGES_DIR, importCaps(config), progress);
    },
  },
];
