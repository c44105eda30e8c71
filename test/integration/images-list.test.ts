import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listImages } from '../../src/images/list.js';
import { writeManifest } from '../../src/images/manifest.js';
import { installStaging, makeStaging } from '../../src/images/store.js';

// `image list` reads each image's size from the record made when it was installed,
// instead of walking every file of every image on each call.

const HEX = 'cd'.repeat(32);

async function stagedImage(imagesDir: string, image: string, bytes: number): Promise<string> {
  const staging = await makeStaging(imagesDir, `.build-${image}-`);
  await mkdir(join(staging, 'rootfs/usr/bin'), { recursive: true });
  await writeFile(join(staging, 'rootfs/usr/bin/data'), Buffer.alloc(bytes, 1));
  await writeManifest(staging, { image, suite: 'bookworm', recipeHash: HEX, digest: HEX, builtAt: new Date().toISOString(), compilers: {} });
  return staging;
}

describe('image list', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'runbox-images-list-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('records the size at install and reads the record afterwards, without walking the tree', async () => {
    await installStaging(dir, 'sized', await stagedImage(dir, 'sized', 50_000));
    const record = JSON.parse(await readFile(join(dir, 'sized', 'size.json'), 'utf8')) as { digest: string; bytes: number };
    expect(record).to.deep.equal({ digest: HEX, bytes: 50_000 });
    // The tree grows behind the record's back: the listing keeps the recorded size, so it did not walk.
    await appendFile(join(dir, 'sized', 'rootfs/usr/bin/data'), Buffer.alloc(1_000, 2));
    expect((await listImages(dir)).map((i) => [i.image, i.sizeBytes])).to.deep.equal([['sized', 50_000]]);
  });

  it('measures an image without a record once, and keeps the record', async () => {
    await installStaging(dir, 'older', await stagedImage(dir, 'older', 20_000));
    await rm(join(dir, 'older', 'size.json'));
    expect((await listImages(dir))[0]!.sizeBytes).to.equal(20_000);
    expect(existsSync(join(dir, 'older', 'size.json'))).to.equal(true);
  });

  it('measures again when the record belongs to another digest (a tree replaced by hand)', async () => {
    await installStaging(dir, 'swapped', await stagedImage(dir, 'swapped', 10_000));
    await writeFile(join(dir, 'swapped', 'size.json'), JSON.stringify({ digest: 'ef'.repeat(32), bytes: 1 }));
    expect((await listImages(dir))[0]!.sizeBytes).to.equal(10_000);
  });
});
