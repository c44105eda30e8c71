import { expect } from 'chai';
import { execa } from 'execa';
import { copyFile, lstat, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { addLinks } from '../../src/images/links.js';

// A recipe's links on a small tree: made where asked, checked inside the tree (its own
// /usr/bin/test, run in a chroot as the build runs its probes), never written through a
// symbolic link onto the build host, never over what is already there.

/** The host's /usr/bin/test and the libraries ldd says it loads, copied into root. */
async function copyTestProgram(root: string): Promise<void> {
  const { stdout } = await execa('ldd', ['/usr/bin/test']);
  const libraries = [...stdout.matchAll(/(\/\S+)/g)].map((m) => m[1]!);
  for (const file of ['/usr/bin/test', ...libraries]) {
    await mkdir(join(root, dirname(file)), { recursive: true });
    await copyFile(file, join(root, file));
  }
}

describe('image links', function () {
  let root: string;
  let host: string;
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('      SKIPPED: chroot needs root');
      this.skip();
    }
    root = await mkdtemp(join(tmpdir(), 'runbox-links-test-'));
    host = await mkdtemp(join(tmpdir(), 'runbox-links-host-'));
    await copyTestProgram(root);
    await mkdir(join(root, 'proc'));
    await mkdir(join(root, 'usr/lib/jvm/jdk/bin'), { recursive: true });
    await writeFile(join(root, 'usr/bin/g++-12'), 'binary', { mode: 0o755 });
    await symlink('g++-12', join(root, 'usr/bin/g++'));
    await mkdir(join(root, 'usr/local/bin'), { recursive: true });
    await writeFile(join(root, 'usr/local/bin/tool'), 'a file of a package');
    // An absolute symlink of the tree: on the build host it points at the host's own directory.
    await symlink(host, join(root, 'usr/local/outside'));
  });
  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
    if (host) await rm(host, { recursive: true, force: true });
  });

  it('makes each link, with the directories on its way, and checks its target inside the tree', async () => {
    await addLinks(root, { '/usr/local/gcc-9.2.0/bin/g++': '/usr/bin/g++', '/usr/local/openjdk13': '/usr/lib/jvm/jdk' }, log);
    expect(await readlink(join(root, 'usr/local/gcc-9.2.0/bin/g++'))).to.equal('/usr/bin/g++');
    expect(await readlink(join(root, 'usr/local/openjdk13'))).to.equal('/usr/lib/jvm/jdk');
    expect((await lstat(join(root, 'usr/local/gcc-9.2.0/bin'))).isDirectory()).to.equal(true);
    expect(lines.at(-1)).to.equal('linked 2 paths: /usr/local/gcc-9.2.0/bin/g++, /usr/local/openjdk13');
  });

  it('refuses a target the tree does not have (the host having it does not count)', async () => {
    // /usr/bin/env is on the host, not in this tree.
    const err = await addLinks(root, { '/usr/local/bin/env': '/usr/bin/env' }, log).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error).with.property('message', 'link /usr/local/bin/env -> /usr/bin/env: the target is not in the image');
  });

  it('never replaces a file of the tree', async () => {
    const err = await addLinks(root, { '/usr/local/bin/tool': '/usr/bin/g++' }, log).catch((e: Error) => e);
    expect(err).to.be.instanceOf(Error).with.property('message', 'link /usr/local/bin/tool -> /usr/bin/g++: something is already there');
    expect((await lstat(join(root, 'usr/local/bin/tool'))).isFile()).to.equal(true);
  });

  it('never goes through a symbolic link of the tree: nothing is written on the host, nor through another link', async () => {
    const outside = await addLinks(root, { '/usr/local/outside/x/g++': '/usr/bin/g++' }, log).catch((e: Error) => e);
    expect(outside).to.be.instanceOf(Error).with.property('message', 'link /usr/local/outside/x/g++ -> /usr/bin/g++: /usr/local/outside is a symbolic link');
    expect(await lstat(join(host, 'x')).catch(() => 'absent')).to.equal('absent');
    const throughLink = await addLinks(root, { '/usr/local/openjdk13/bin/java': '/usr/bin/g++' }, log).catch((e: Error) => e);
    expect(throughLink).to.be.instanceOf(Error).with.property('message', 'link /usr/local/openjdk13/bin/java -> /usr/bin/g++: /usr/local/openjdk13 is a symbolic link');
    expect(await lstat(join(root, 'usr/lib/jvm/jdk/bin/java')).catch(() => 'absent')).to.equal('absent');
  });
});
