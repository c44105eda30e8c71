import { expect } from 'chai';
import { execa } from 'execa';
import { chmod, lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditTree, cleanTree } from '../../src/images/clean.js';
import { IMAGE_MOUNT_POINTS } from '../../src/sandbox/spec.js';

// What the builder does to a bootstrapped tree before it becomes an image, on a small
// tree that has each kind of thing it must remove.

describe('image cleaning', function () {
  let root: string;

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('      SKIPPED: creating device nodes and file capabilities needs root');
      this.skip();
    }
    root = await mkdtemp(join(tmpdir(), 'runbox-clean-test-'));
    await mkdir(join(root, 'usr/bin'), { recursive: true });
    await mkdir(join(root, 'usr/share/doc/pkg'), { recursive: true });
    await mkdir(join(root, 'usr/share/man/man1'), { recursive: true });
    await mkdir(join(root, 'var/lib/apt/lists'), { recursive: true });
    await mkdir(join(root, 'var/mail'), { recursive: true });
    await mkdir(join(root, 'dev'), { recursive: true });
    await mkdir(join(root, 'tmp'), { recursive: true });
    await writeFile(join(root, 'usr/share/doc/pkg/copyright'), 'text');
    await writeFile(join(root, 'usr/share/man/man1/x.1'), 'text');
    await writeFile(join(root, 'var/lib/apt/lists/deb.debian.org_Packages'), 'list');
    await writeFile(join(root, 'tmp/leftover'), 'x');
    await writeFile(join(root, 'usr/bin/su'), 'binary', { mode: 0o755 });
    await chmod(join(root, 'usr/bin/su'), 0o4755);
    await writeFile(join(root, 'usr/bin/wall'), 'binary', { mode: 0o755 });
    await chmod(join(root, 'usr/bin/wall'), 0o2755);
    await chmod(join(root, 'var/mail'), 0o2775);
    await writeFile(join(root, 'usr/bin/ping'), 'binary', { mode: 0o755 });
    await execa('setcap', ['cap_net_raw+ep', join(root, 'usr/bin/ping')]);
    await execa('mknod', [join(root, 'dev/null'), 'c', '1', '3']);
    await execa('mknod', [join(root, 'usr/bin/sneaky-disk'), 'b', '8', '0']);
    await execa('mkfifo', [join(root, 'usr/bin/fifo')]);
    await symlink('/proc/self/fd', join(root, 'dev/fd'));
  });

  after(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('finds the problems before cleaning', async () => {
    const problems = await auditTree(root);
    expect(problems.join('\n')).to.match(/usr\/bin\/su: setuid/).and.match(/usr\/bin\/sneaky-disk: special/).and.match(/\/box: mount point missing/);
  });

  it('strips setuid/setgid bits, capabilities, device nodes, fifos, docs and package lists, and adds empty mount points', async () => {
    const report = await cleanTree(root);
    expect(report.strippedSetid.sort()).to.deep.equal(['usr/bin/su', 'usr/bin/wall', 'var/mail']);
    expect(report.removedSpecial.sort()).to.deep.equal(['usr/bin/fifo', 'usr/bin/sneaky-disk']);
    expect(report.droppedCapabilities).to.deep.equal(['usr/bin/ping']);
    expect((await lstat(join(root, 'usr/bin/su'))).mode & 0o7777).to.equal(0o755);
    expect((await execa('getcap', [join(root, 'usr/bin/ping')])).stdout.trim()).to.equal('');
    expect(await readdir(join(root, 'usr/share/doc'))).to.deep.equal([]);
    expect(await readdir(join(root, 'usr/share/man'))).to.deep.equal([]);
    expect(await readdir(join(root, 'var/lib/apt/lists'))).to.deep.equal([]);
    for (const m of IMAGE_MOUNT_POINTS) expect(await readdir(join(root, m)), m).to.deep.equal([]);
    expect((await lstat(join(root, 'tmp'))).mode & 0o7777).to.equal(0o1777);
    expect(await auditTree(root)).to.deep.equal([]);
  });
});
