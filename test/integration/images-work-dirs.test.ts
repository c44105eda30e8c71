import { expect } from 'chai';
import { execa } from 'execa';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, readlink, rm, utimes, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// Work directories of image builds and imports never outlive their process for long:
// what a killed build leaves behind is removed by the next build and by `image clean`,
// while the directory of a build still under way is left alone.

const ADMIN = join(PROJECT_ROOT, 'dist/src/cli/admin.js');

function admin(imagesDir: string, args: string[], env: Record<string, string> = {}) {
  return execa('node', [ADMIN, ...args], { env: { ...process.env, RUNBOX_IMAGES_DIR: imagesDir, ...env }, reject: false });
}

/** Pids of the processes that have `path` open (the holders of a lock file). */
async function holdersOf(path: string): Promise<{ pid: number; cmd: string }[]> {
  const out: { pid: number; cmd: string }[] = [];
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === path) {
        const cmd = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).split('\0').join(' ').trim();
        out.push({ pid: Number(pid), cmd });
        break;
      }
    }
  }
  return out;
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const workDirs = async (dir: string) => (await readdir(dir)).filter((n) => n.startsWith('.build-') || n.startsWith('.import-')).sort();

describe('image work directories', function () {
  let work: string;

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('      SKIPPED: image builds run as root');
      this.skip();
    }
    work = await mkdtemp(join(tmpdir(), 'runbox-workdirs-test-'));
  });
  after(async () => {
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('image clean removes those of dead processes (and day-old ones without a lock file) and keeps live ones', async () => {
    const images = join(work, 'planted');
    await mkdir(images);
    // A build killed outright: its directory and its lock file, which nobody holds.
    await mkdir(join(images, '.build-gcc-0123456789ab/rootfs/usr'), { recursive: true });
    await writeFile(join(images, '.build-gcc-0123456789ab/rootfs/usr/half-written'), 'x');
    await writeFile(join(images, '.build-gcc-0123456789ab.lock'), '');
    // An import killed a while ago by an older version, which made no lock file; and
    // one of today, which may still be running.
    await mkdir(join(images, '.import-AbC123'));
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    await utimes(join(images, '.import-AbC123'), twoDaysAgo, twoDaysAgo);
    await mkdir(join(images, '.import-XyZ789'));
    // A lock file whose directory is already gone.
    await writeFile(join(images, '.import-ffffffffffff.lock'), '');
    // A build under way in another process.
    const live = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const m = await import(${JSON.stringify(join(PROJECT_ROOT, 'dist/src/images/work-dirs.js'))});
         const w = await m.makeWorkDir(${JSON.stringify(images)}, '.build-', 'python3.9');
         console.log(w.path); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const livePath = await new Promise<string>((resolve) => live.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim())));
      const liveName = livePath.split('/').pop()!;
      expect(await workDirs(images)).to.deep.equal(['.build-gcc-0123456789ab', '.build-gcc-0123456789ab.lock', liveName, `${liveName}.lock`, '.import-AbC123', '.import-XyZ789', '.import-ffffffffffff.lock'].sort());

      const cleaned = await admin(images, ['image', 'clean']);
      expect(cleaned.exitCode, cleaned.stderr).to.equal(0);
      expect(JSON.parse(cleaned.stdout)).to.deep.equal({ removed: ['.build-gcc-0123456789ab', '.import-AbC123'] });
      expect(await workDirs(images)).to.deep.equal([liveName, `${liveName}.lock`, '.import-XyZ789'].sort());

      // Once its process is killed, the next clean takes it too.
      live.kill('SIGKILL');
      await new Promise((r) => live.once('exit', r));
      const again = await admin(images, ['image', 'clean']);
      expect(JSON.parse(again.stdout)).to.deep.equal({ removed: [liveName] });
      expect(await workDirs(images)).to.deep.equal(['.import-XyZ789']);
    } finally {
      if (live.exitCode === null) live.kill('SIGKILL');
    }
  });

  it('a killed image build leaves a directory that the next build removes once its debootstrap is gone too', async function () {
    const found = await execa('debootstrap', ['--version'], { reject: false });
    if (found.failed && found.exitCode === undefined) {
      console.log('      SKIPPED: debootstrap is not installed');
      this.skip();
    }
    // A mirror that takes the connection and never answers: debootstrap waits in wget.
    const sockets: Socket[] = [];
    let requests = 0;
    const mirror = http.createServer((req) => {
      requests++;
      sockets.push(req.socket);
    });
    await new Promise<void>((r) => mirror.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(mirror.address() as AddressInfo).port}/debian`;
    const images = join(work, 'killed');
    const holders: number[] = [];
    try {
      const build = execa('node', [ADMIN, 'image', 'build', 'python3.9', '--force'], {
        env: { ...process.env, RUNBOX_IMAGES_DIR: images, RUNBOX_DEBIAN_MIRROR: url },
        reject: false,
      });
      await until('debootstrap asking the mirror', () => requests > 0);
      const [dir] = await workDirs(images);
      expect(dir).to.match(/^\.build-python3\.9-[0-9a-f]{12}$/);
      build.kill('SIGKILL');
      await build;
      expect(existsSync(join(images, dir!)), 'the killed build could not remove its directory').to.equal(true);

      // debootstrap lives on (it has its own process group) and still holds the lock:
      // its directory is in use, and clean leaves it alone.
      const lockPath = join(images, `${dir!}.lock`);
      const live = await holdersOf(lockPath);
      expect(live.map((h) => h.cmd).join('\n')).to.match(/debootstrap/);
      holders.push(...live.map((h) => h.pid));
      expect(JSON.parse((await admin(images, ['image', 'clean'])).stdout)).to.deep.equal({ removed: [] });
      expect(existsSync(join(images, dir!))).to.equal(true);

      for (const pid of holders) process.kill(pid, 'SIGKILL');
      await until('the lock holders gone', async () => (await holdersOf(lockPath)).length === 0);

      // The next build removes it before doing anything else (this one fails at once: no mirror there).
      const next = await admin(images, ['image', 'build', 'python3.9', '--force'], { RUNBOX_DEBIAN_MIRROR: 'file:///nonexistent-runbox-mirror' });
      expect(next.exitCode).to.equal(1);
      expect(next.stderr).to.include(`removed ${join(images, dir!)}`);
      expect(await workDirs(images)).to.deep.equal([]);
    } finally {
      for (const pid of holders) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      for (const s of sockets) s.destroy();
      await new Promise((r) => mirror.close(r));
    }
  });
});
