import { expect } from 'chai';
import { execa } from 'execa';
import { createWriteStream, existsSync } from 'node:fs';
import { chmod, link, lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import tar from 'tar-stream';
import { readManifest } from '../../src/compilers/availability.js';
import { importCaps, importImage, ImportRefused, type ImportCaps } from '../../src/images/import.js';
import { loadConfig } from '../../src/config.js';
import { writeManifest } from '../../src/images/manifest.js';
import { packImage } from '../../src/images/pack.js';
import { installedImages, installStaging, makeStaging } from '../../src/images/store.js';
import { treeDigest } from '../../src/images/tree.js';
import { IMAGE_MOUNT_POINTS } from '../../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// Pack and import of image archives, and the importer's refusals of crafted archives.
// Runs as root (the importer restores owners); no debootstrap needed.

const HEX = 'ab'.repeat(32);
/** The configured caps (defaults unless the environment sets them). */
const CAPS = importCaps(loadConfig());

/** A small image tree with what real images have: absolute and relative symlinks, a hard link. */
async function syntheticImage(dir: string): Promise<string> {
  const rootfs = join(dir, 'rootfs');
  for (const m of IMAGE_MOUNT_POINTS) await mkdir(join(rootfs, m), { recursive: true });
  await chmod(join(rootfs, 'tmp'), 0o1777);
  await mkdir(join(rootfs, 'usr/bin'), { recursive: true });
  await mkdir(join(rootfs, 'etc/alternatives'), { recursive: true });
  await writeFile(join(rootfs, 'usr/bin/tool'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
  await writeFile(join(rootfs, 'usr/bin/data'), Buffer.alloc(300_000, 7), { mode: 0o644 });
  await link(join(rootfs, 'usr/bin/tool'), join(rootfs, 'usr/bin/tool-hardlink'));
  await symlink('/usr/bin/tool', join(rootfs, 'etc/alternatives/tool'));
  await symlink('/etc/alternatives/tool', join(rootfs, 'usr/bin/alt-tool'));
  await symlink('../bin/tool', join(rootfs, 'usr/bin/rel-tool'));
  await mkdir(join(rootfs, 'usr/share/a-very-long-directory-name-to-need-pax-headers-'.repeat(3)), { recursive: true });
  await writeFile(join(rootfs, 'usr/share/a-very-long-directory-name-to-need-pax-headers-'.repeat(3), 'file-with-a-long-name.txt'), 'long\n');
  await chmod(join(rootfs, 'etc'), 0o750);
  await writeManifest(dir, {
    image: 'synthetic',
    suite: 'bookworm',
    recipeHash: HEX,
    digest: await treeDigest(rootfs),
    builtAt: new Date().toISOString(),
    compilers: { 'python-3.9.7': { version: '0.0.1' } },
  });
  return rootfs;
}

interface CraftedEntry {
  header: tar.Header | (Partial<tar.Header> & { name: string });
  content?: string | Buffer;
}

async function writeArchive(file: string, entries: CraftedEntry[], compression: 'none' | 'gzip' = 'none'): Promise<void> {
  const pack = tar.pack();
  const sink = createWriteStream(file);
  const done = compression === 'gzip' ? pipeline(pack, createGzip(), sink) : pipeline(pack, sink);
  for (const e of entries) pack.entry({ mode: 0o644, ...e.header }, e.content ?? '');
  pack.finalize();
  await done;
}

/** A minimal valid image as archive entries (manifest digest computed from a real tree). */
async function validEntries(work: string): Promise<CraftedEntry[]> {
  const dir = join(work, 'valid-src');
  const rootfs = join(dir, 'rootfs');
  for (const m of IMAGE_MOUNT_POINTS) await mkdir(join(rootfs, m), { recursive: true, mode: 0o755 });
  for (const m of IMAGE_MOUNT_POINTS) await chmod(join(rootfs, m), 0o755);
  await chmod(rootfs, 0o755);
  const manifest = {
    image: 'crafted',
    suite: 'bookworm',
    recipeHash: HEX,
    digest: await treeDigest(rootfs),
    builtAt: new Date().toISOString(),
    compilers: {},
  };
  await rm(dir, { recursive: true });
  return [
    { header: { name: 'manifest.json', type: 'file' }, content: JSON.stringify(manifest) },
    { header: { name: 'rootfs', type: 'directory', mode: 0o755 } },
    ...IMAGE_MOUNT_POINTS.map((m) => ({ header: { name: `rootfs${m}`, type: 'directory' as const, mode: 0o755 } })),
  ];
}

describe('image pack and import', function () {
  let work: string;
  let imagesA: string;
  let imagesB: string;

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('      SKIPPED: image import restores file owners and must run as root');
      this.skip();
    }
    work = await mkdtemp(join(tmpdir(), 'runbox-images-test-'));
    imagesA = join(work, 'images-a');
    imagesB = join(work, 'images-b');
    const staging = await makeStaging(imagesA, '.build-synthetic-');
    await syntheticImage(staging);
    await installStaging(imagesA, 'synthetic', staging);
  });

  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  for (const compression of ['zstd', 'gzip', 'none'] as const) {
    it(`round-trips an image through a ${compression} archive with links, modes and digest intact`, async () => {
      const file = join(work, `synthetic-${compression}.tar`);
      const packed = await packImage(imagesA, 'synthetic', file, compression);
      expect(packed.bytes).to.be.greaterThan(0);
      const head = (await readFile(file)).subarray(0, 4);
      if (compression === 'zstd') expect(head.toString('hex')).to.equal('28b52ffd');
      if (compression === 'gzip') expect(head.subarray(0, 2).toString('hex')).to.equal('1f8b');

      const target = join(imagesB, compression);
      const result = await importImage(file, target, CAPS);
      expect(result.image).to.equal('synthetic');
      const rootfs = join(target, 'synthetic', 'rootfs');
      expect(await treeDigest(rootfs)).to.equal(readManifest(imagesA, 'synthetic')!.digest);
      expect(readManifest(target, 'synthetic')!.compilers).to.deep.equal({ 'python-3.9.7': { version: '0.0.1' } });
      expect(await readlink(join(rootfs, 'usr/bin/alt-tool'))).to.equal('/etc/alternatives/tool');
      expect(await readlink(join(rootfs, 'usr/bin/rel-tool'))).to.equal('../bin/tool');
      const a = await lstat(join(rootfs, 'usr/bin/tool'));
      const b = await lstat(join(rootfs, 'usr/bin/tool-hardlink'));
      expect(b.ino).to.equal(a.ino);
      expect(a.mode & 0o7777).to.equal(0o755);
      expect((await lstat(join(rootfs, 'tmp'))).mode & 0o7777).to.equal(0o1777);
      expect((await lstat(join(rootfs, 'etc'))).mode & 0o7777).to.equal(0o750);
      expect(await installedImages(target)).to.deep.equal(['synthetic']);
      expect((await readdir(target)).filter((n) => n.startsWith('.import-'))).to.deep.equal([]);
    });
  }

  it('replaces an installed image atomically and keeps only the version just replaced', async () => {
    const file = join(work, 'synthetic-none.tar');
    const target = join(imagesB, 'none');
    const before = await readlink(join(target, 'synthetic'));
    await importImage(file, target, CAPS);
    const middle = await readlink(join(target, 'synthetic'));
    await importImage(file, target, CAPS);
    const after = await readlink(join(target, 'synthetic'));
    expect(new Set([before, middle, after]).size).to.equal(3);
    const stores = (await readdir(join(target, '.store'))).sort();
    expect(stores).to.deep.equal([middle, after].map((p) => p.split('/').pop()!).sort());
  });

  describe('refuses crafted archives', () => {
    let outside: string;
    let base: CraftedEntry[];

    before(async () => {
      base = await validEntries(work);
      outside = join(work, 'outside');
      await mkdir(outside, { recursive: true });
      await writeFile(join(outside, 'victim'), 'original\n');
    });

    async function expectRefused(label: string, entries: CraftedEntry[], why: RegExp, compression: 'none' | 'gzip' = 'none', caps: ImportCaps = CAPS) {
      const images = join(work, `refused-${label}`);
      const file = join(work, `${label}.tar`);
      await writeArchive(file, entries, compression);
      let error: unknown;
      try {
        await importImage(file, images, caps);
      } catch (err) {
        error = err;
      }
      expect(error, `${label} was accepted`).to.be.instanceOf(ImportRefused);
      expect((error as Error).message).to.match(why);
      // Nothing installed, no work directory left behind, nothing outside touched.
      expect(await readdir(images)).to.deep.equal([]);
      expect(await readdir(outside)).to.deep.equal(['victim']);
      expect(await readFile(join(outside, 'victim'), 'utf8')).to.equal('original\n');
    }

    it('the valid base archive itself is accepted (so each refusal below is due to its one bad entry)', async () => {
      const file = join(work, 'base.tar');
      await writeArchive(file, base);
      const images = join(work, 'base-images');
      expect((await importImage(file, images, CAPS)).image).to.equal('crafted');
    });

    it('more entries than the cap, before writing the one over it', async () => {
      const many = Array.from({ length: 40 }, (_, i) => ({ header: { name: `rootfs/usr/d${i}`, type: 'directory' as const, mode: 0o755 } }));
      const caps = { ...CAPS, maxEntries: base.length + 10 };
      await expectRefused('entries', [...base, { header: { name: 'rootfs/usr', type: 'directory', mode: 0o755 } }, ...many], /more than \d+ entries \(RUNBOX_IMAGE_IMPORT_MAX_ENTRIES\)/, 'none', caps);
      // The same archive under the default cap is refused only for its digest.
      await expectRefused('entries-default', [...base, { header: { name: 'rootfs/usr', type: 'directory', mode: 0o755 } }, ...many], /digest mismatch/);
    });

    it('a compressed archive that unpacks past the size cap (a bomb), however small it is', async () => {
      const zeros = Buffer.alloc(24 * 1024 * 1024);
      const entries: CraftedEntry[] = [...base, { header: { name: 'rootfs/usr', type: 'directory', mode: 0o755 } }, { header: { name: 'rootfs/usr/zeros', type: 'file' }, content: zeros }];
      await expectRefused('bomb', entries, /unpacks to more than 16 MiB \(RUNBOX_IMAGE_IMPORT_MAX_MB\), at "rootfs\/usr\/zeros"/, 'gzip', { ...CAPS, maxUnpackedBytes: 16 * 1024 * 1024 });
      expect((await lstat(join(work, 'bomb.tar'))).size).to.be.below(1024 * 1024);
      // Many files each under the cap count together.
      const parts = Array.from({ length: 5 }, (_, i) => ({ header: { name: `rootfs/part${i}`, type: 'file' as const }, content: Buffer.alloc(1000, i) }));
      await expectRefused('sum', [...base, ...parts], /unpacks to more than 0 MiB .*at "rootfs\/part3"/, 'none', { ...CAPS, maxUnpackedBytes: 3500 });
    });

    it('an absolute path', async () => {
      await expectRefused('absolute', [...base, { header: { name: join(outside, 'abs'), type: 'file' }, content: 'x' }], /absolute path/);
      expect(existsSync(join(outside, 'abs'))).to.equal(false);
    });

    it("a ../ escape", async () => {
      await expectRefused('dotdot', [...base, { header: { name: 'rootfs/../../outside/escaped', type: 'file' }, content: 'x' }], /'\.\.' component/);
    });

    it('a relative symlink that leaves the tree', async () => {
      await expectRefused('symlink-rel', [...base, { header: { name: 'rootfs/up', type: 'symlink', linkname: '../../../outside' } }], /leaves the image/);
    });

    it('a file written through a symlinked directory', async () => {
      // The absolute symlink itself is normal in an image; writing through it is not.
      const entries = [
        ...base,
        { header: { name: 'rootfs/evil', type: 'symlink' as const, linkname: outside } },
        { header: { name: 'rootfs/evil/victim', type: 'file' as const }, content: 'overwritten\n' },
      ];
      await expectRefused('through-symlink-dir', entries, /parent path traverses a symlink/);
    });

    it('a file entry that reuses a symlink name', async () => {
      const entries = [
        ...base,
        { header: { name: 'rootfs/victim', type: 'symlink' as const, linkname: join(outside, 'victim') } },
        { header: { name: 'rootfs/victim', type: 'file' as const }, content: 'overwritten\n' },
      ];
      await expectRefused('through-symlink-file', entries, /duplicate entry/);
    });

    it('a hard link to a file outside the tree', async () => {
      await expectRefused('hardlink-abs', [...base, { header: { name: 'rootfs/hl', type: 'link', linkname: join(outside, 'victim') } }], /absolute path/);
      await expectRefused('hardlink-dotdot', [...base, { header: { name: 'rootfs/hl', type: 'link', linkname: 'rootfs/../../outside/victim' } }], /'\.\.' component/);
    });

    it('a hard link through a symlinked directory', async () => {
      const entries = [
        ...base,
        { header: { name: 'rootfs/out', type: 'symlink' as const, linkname: outside } },
        { header: { name: 'rootfs/hl', type: 'link' as const, linkname: 'rootfs/out/victim' } },
      ];
      await expectRefused('hardlink-via-symlink', entries, /traverses a symlink/);
    });

    it('device nodes and fifos', async () => {
      await expectRefused('chardev', [...base, { header: { name: 'rootfs/mem', type: 'character-device', devmajor: 1, devminor: 1 } }], /character-device entries are not allowed/);
      await expectRefused('blockdev', [...base, { header: { name: 'rootfs/sda', type: 'block-device', devmajor: 8, devminor: 0 } }], /block-device entries are not allowed/);
      await expectRefused('fifo', [...base, { header: { name: 'rootfs/pipe', type: 'fifo' } }], /fifo entries are not allowed/);
    });

    it('setuid and setgid files', async () => {
      await expectRefused('setuid', [...base, { header: { name: 'rootfs/su', type: 'file', mode: 0o4755 }, content: 'x' }], /setuid\/setgid/);
      await expectRefused('setgid', [...base, { header: { name: 'rootfs/sg', type: 'file', mode: 0o2755 }, content: 'x' }], /setuid\/setgid/);
    });

    it('files owned by ordinary (possibly sandbox) users', async () => {
      await expectRefused('owner', [...base, { header: { name: 'rootfs/mine', type: 'file', uid: 61000, gid: 0 }, content: 'x' }], /owner id 61000 is not a system account/);
    });

    it('a manifest whose digest does not match the tree', async () => {
      await expectRefused('extra-file', [...base, { header: { name: 'rootfs/added', type: 'file' }, content: 'not in the digest' }], /digest mismatch/, 'gzip');
      const manifest = JSON.parse(String(base[0]!.content)) as { digest: string };
      const forged = [{ header: base[0]!.header, content: JSON.stringify({ ...manifest, digest: 'cd'.repeat(32) }) }, ...base.slice(1)];
      await expectRefused('forged-digest', forged, /digest mismatch/);
    });

    it('a manifest image name that is a path', async () => {
      const manifest = JSON.parse(String(base[0]!.content)) as object;
      const bad = [{ header: base[0]!.header, content: JSON.stringify({ ...manifest, image: '../outside' }) }, ...base.slice(1)];
      await expectRefused('manifest-path', bad, /manifest.json is invalid at \/image/);
    });

    it('entries outside rootfs/, a missing mount point, and garbage', async () => {
      await expectRefused('top-level', [...base, { header: { name: 'etc/passwd', type: 'file' }, content: 'x' }], /only manifest.json and rootfs/);
      await expectRefused('no-mountpoint', base.filter((e) => e.header.name !== 'rootfs/box'), /mount point missing/);
      const images = join(work, 'refused-garbage');
      const file = join(work, 'garbage.tar');
      await writeFile(file, Buffer.alloc(5000, 0x41));
      const err = await importImage(file, images, CAPS).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ImportRefused);
      expect(await readdir(images)).to.deep.equal([]);
    });
  });

  it('the admin CLI packs, imports, lists and removes an image', async () => {
    const cli = join(PROJECT_ROOT, 'dist/src/cli/admin.js');
    const env = { ...process.env, RUNBOX_IMAGES_DIR: imagesA };
    const file = join(work, 'cli.tar.gz');
    const packed = await execa('node', [cli, 'image', 'pack', 'synthetic', '--gzip', '--out', file], { env });
    expect(JSON.parse(packed.stdout)).to.include({ image: 'synthetic', compression: 'gzip' });

    const target = join(work, 'images-cli');
    const envB = { ...process.env, RUNBOX_IMAGES_DIR: target };
    const imported = await execa('node', [cli, 'image', 'import', file], { env: envB });
    expect(JSON.parse(imported.stdout)).to.include({ image: 'synthetic' });
    const listed = JSON.parse((await execa('node', [cli, 'image', 'list'], { env: envB })).stdout) as { image: string; state: string; size_bytes: number }[];
    expect(listed.map((i) => [i.image, i.state])).to.deep.equal([['synthetic', 'no recipe']]);
    expect(listed[0]!.size_bytes).to.be.greaterThan(300_000);
    await execa('node', [cli, 'image', 'remove', 'synthetic'], { env: envB });
    expect(await installedImages(target)).to.deep.equal([]);
    const again = await execa('node', [cli, 'image', 'remove', 'synthetic'], { env: envB, reject: false });
    expect(again.exitCode).to.equal(1);
    expect(again.stderr).to.match(/not installed/);

    // The caps come from the environment; a refused import leaves nothing behind.
    const capped = await execa('node', [cli, 'image', 'import', file], { env: { ...envB, RUNBOX_IMAGE_IMPORT_MAX_ENTRIES: '10' }, reject: false });
    expect(capped.exitCode).to.equal(1);
    expect(capped.stderr).to.match(/more than 10 entries/);
    expect(await readdir(target)).to.deep.equal(['.store']);
    expect(await readdir(join(target, '.store'))).to.deep.equal([]);
  });
});
