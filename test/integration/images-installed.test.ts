import { expect } from 'chai';
import { execa } from 'execa';
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { imageRootfs, readManifest } from '../../src/compilers/availability.js';
import { defaultImages, loadRecipes } from '../../src/compilers/catalogue.js';
import { loadConfig } from '../../src/config.js';
import { auditTree } from '../../src/images/clean.js';
import { probeVersion } from '../../src/images/probe.js';
import { builtFrom } from '../../src/images/recipes.js';
import { treeDigest, walkTree } from '../../src/images/tree.js';
import { IMAGE_MOUNT_POINTS } from '../../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// The default images as `runbox-admin image build --default` installed them (setup
// runs it): their manifests must tell the truth about the trees beside them.

const imagesDir = loadConfig().RUNBOX_IMAGES_DIR;
const DEFAULT_IMAGES = defaultImages();

for (const image of DEFAULT_IMAGES) {
  describe(`installed image ${image}`, function () {
    const recipe = loadRecipes().find((r) => r.image === image)!;
    const rootfs = imageRootfs(imagesDir, image);

    before(function () {
      if (!readManifest(imagesDir, image)) {
        console.log(`      SKIPPED: ${image} is not installed in ${imagesDir}; run \`runbox-admin image build --default\``);
        this.skip();
      }
    });

    it('was built from the current recipe', () => {
      expect(builtFrom(readManifest(imagesDir, image)!.recipeHash, recipe)).to.equal(true);
      expect(readManifest(imagesDir, image)!.suite).to.equal(recipe.suite);
    });

    it('records, for every compiler, the version its probe prints inside the image, and the recipe states it', async () => {
      const manifest = readManifest(imagesDir, image)!;
      expect(Object.keys(manifest.compilers).sort()).to.deep.equal(Object.keys(recipe.compilers).sort());
      for (const [id, compiler] of Object.entries(recipe.compilers)) {
        const { version } = await probeVersion(rootfs, compiler);
        expect(manifest.compilers[id]!.version, id).to.equal(version);
        expect(compiler.version, `rootfs/${image}.json version of ${id}`).to.equal(version);
      }
    });

    it('contains every mount point as an empty directory', async () => {
      for (const mount of IMAGE_MOUNT_POINTS) {
        expect((await lstat(join(rootfs, mount))).isDirectory(), mount).to.equal(true);
        expect(await readdir(join(rootfs, mount)), mount).to.deep.equal([]);
      }
    });

    it('has no setuid/setgid files and no device nodes', async () => {
      let setid = 0;
      let special = 0;
      let files = 0;
      for await (const { stats } of walkTree(rootfs)) {
        if (stats.isFile()) files++;
        if (!stats.isSymbolicLink() && stats.mode & 0o6000) setid++;
        if (!stats.isFile() && !stats.isDirectory() && !stats.isSymbolicLink()) special++;
      }
      expect(files).to.be.greaterThan(1000);
      expect({ setid, special }).to.deep.equal({ setid: 0, special: 0 });
      expect(await auditTree(rootfs)).to.deep.equal([]);
    });

    it('has no documentation or package lists left', async () => {
      for (const dir of ['usr/share/doc', 'usr/share/man', 'var/lib/apt/lists', 'var/cache/apt']) {
        const entries = await readdir(join(rootfs, dir)).catch(() => []);
        expect(entries, dir).to.deep.equal([]);
      }
    });

    it('matches its manifest digest', async () => {
      expect(await treeDigest(rootfs)).to.equal(readManifest(imagesDir, image)!.digest);
    });
  });
}

describe('every installed image built from a recipe', () => {
  it('states in its recipe the versions its manifest records', async function () {
    const recipes = loadRecipes().filter((r) => builtFrom(readManifest(imagesDir, r.image)?.recipeHash ?? '', r));
    if (!recipes.length) {
      console.log(`      SKIPPED: no image in ${imagesDir} is built from its current recipe`);
      this.skip();
    }
    for (const recipe of recipes) {
      const manifest = readManifest(imagesDir, recipe.image)!;
      for (const [id, compiler] of Object.entries(recipe.compilers)) {
        expect(manifest.compilers[id]?.version, `${recipe.image} ${id}`).to.equal(compiler.version);
      }
      for (const mount of IMAGE_MOUNT_POINTS) expect((await lstat(join(imageRootfs(imagesDir, recipe.image), mount))).isDirectory()).to.equal(true);
    }
  });
});

describe('image build --default', () => {
  it('skips images that are up to date, saying so on stderr and in the JSON', async function () {
    const stale = loadRecipes()
      .filter((r) => DEFAULT_IMAGES.includes(r.image))
      .filter((r) => !builtFrom(readManifest(imagesDir, r.image)?.recipeHash ?? '', r))
      .map((r) => r.image);
    if (stale.length) {
      console.log(`      SKIPPED: ${stale.join(', ')} not built from the current recipe; this test would rebuild them`);
      this.skip();
    }
    const r = await execa('node', [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), 'image', 'build', '--default']);
    const results = JSON.parse(r.stdout) as { image: string; status: string }[];
    expect(results.map((x) => [x.image, x.status])).to.deep.equal(DEFAULT_IMAGES.map((image) => [image, 'up to date']));
    expect(r.stderr).to.match(/python3\.9: up to date/);
  });
});
