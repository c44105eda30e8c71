import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { sweepStaleLaunchDirs } from '../../src/sandbox/launch-dir.js';

// A runner killed outright leaves its launch directory (nsjail configs, the machine view)
// behind; the next runner to start removes those whose runner is gone, and only those.

describe('launch directories of runners that are gone', () => {
  let parent: string;
  beforeEach(() => (parent = mkdtempSync(join(tmpdir(), 'runbox-launch-parent-'))));
  afterEach(() => rmSync(parent, { recursive: true, force: true }));

  it('removes a directory whose lock nobody holds, keeps one whose runner lives, and old unlocked ones go', async () => {
    const dead = join(parent, 'runbox-launch-dead');
    const live = join(parent, 'runbox-launch-live');
    const oldUnlocked = join(parent, 'runbox-launch-old');
    const newUnlocked = join(parent, 'runbox-launch-new');
    for (const d of [dead, live, oldUnlocked, newUnlocked]) mkdirSync(d);
    writeFileSync(join(dead, 'lock'), '');
    writeFileSync(join(dead, 'run-1.cfg'), 'x');
    writeFileSync(join(live, 'lock'), '');
    const old = new Date(Date.now() - 2 * 24 * 3600_000);
    utimesSync(oldUnlocked, old, old);
    // A live process holding the lock, as a runner does for its life.
    const holder = spawn('flock', ['--exclusive', join(live, 'lock'), 'sleep', '30'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 300));
      const removed = await sweepStaleLaunchDirs(parent);
      expect(removed.sort()).to.deep.equal([dead, oldUnlocked].sort());
      expect([existsSync(dead), existsSync(live), existsSync(oldUnlocked), existsSync(newUnlocked)]).to.deep.equal([false, true, false, true]);
    } finally {
      holder.kill('SIGKILL');
    }
  });
});
