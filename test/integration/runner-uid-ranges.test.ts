import { expect } from 'chai';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// Runner processes on one host claim their sandbox uid ranges from each other: the next
// free range when the base is not set, exactly the base or a refusal naming the holder
// when it is, and a dead runner's range is free again. Real runner processes, with a
// lock directory of this test's own. No job runs, so the uids are never used here.

interface Runner {
  child: ChildProcess;
  lines: string[];
  exited: Promise<number | null>;
}

const SLOTS = 3;

describe('runner processes: sandbox uid ranges', function () {
  let t: TestDatabase;
  let lockDir: string;
  const runners: Runner[] = [];

  before(async function () {
    if (process.getuid?.() !== 0) {
      console.log('      SKIPPED: runners need root');
      this.skip();
    }
    t = await freshDatabase('uid_ranges');
    lockDir = await mkdtemp(join(tmpdir(), 'runbox-uid-locks-'));
  });
  after(async () => {
    for (const r of runners) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
    await Promise.all(runners.map((r) => r.exited));
    await t?.drop();
    if (lockDir) await rm(lockDir, { recursive: true, force: true });
  });

  /** A runner process; `base` undefined leaves RUNBOX_SANDBOX_UID_BASE unset. */
  function startRunner(id: string, base: number | undefined): Runner {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      RUNBOX_DATABASE_URL: t.url,
      RUNBOX_RUNNER_SLOTS: String(SLOTS),
      RUNBOX_RUNNER_ID: id,
      RUNBOX_LOCK_DIR: lockDir,
      RUNBOX_LOG_LEVEL: 'info',
      RUNBOX_POLL_MS: '500',
    };
    delete env.RUNBOX_SANDBOX_UID_BASE;
    if (base !== undefined) env.RUNBOX_SANDBOX_UID_BASE = String(base);
    const child = spawn(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/runner.js')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    for (const s of [child.stdout!, child.stderr!]) {
      let buf = '';
      s.on('data', (d: Buffer) => {
        const parts = (buf + d.toString()).split('\n');
        buf = parts.pop()!;
        lines.push(...parts);
      });
    }
    const r = { child, lines, exited: new Promise<number | null>((res) => child.on('exit', (code) => res(code))) };
    runners.push(r);
    return r;
  }

  const logs = (r: Runner) =>
    r.lines.flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });

  /** The range a runner claimed, once it has started. */
  async function claimed(r: Runner): Promise<[number, number]> {
    for (;;) {
      const started = logs(r).some((l) => l.msg === 'runner started');
      const claim = logs(r).find((l) => l.msg === 'sandbox uids claimed');
      if (started && claim) return [claim.first as number, claim.last as number];
      if (r.child.exitCode !== null) throw new Error(`runner exited (${r.child.exitCode}):\n${r.lines.join('\n')}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  const lockFiles = async () => (await readdir(lockDir)).filter((n) => n.startsWith('uids-')).sort();

  it('unset: each runner takes the next free range; set: exactly that range, or a refusal naming the holder; a dead runner frees its range', async () => {
    const a = startRunner('uid-a', undefined);
    expect(await claimed(a)).to.deep.equal([61000, 61002]);
    const b = startRunner('uid-b', undefined);
    expect(await claimed(b)).to.deep.equal([61003, 61005]);
    expect(await lockFiles()).to.deep.equal(['uids-61000-61002.lock', 'uids-61003-61005.lock']);

    // An explicit base that overlaps a live runner's range: refused, naming it.
    const clash = startRunner('uid-clash', 61002);
    expect(await clash.exited).to.equal(1);
    const refusal = logs(clash).find((l) => l.msg === 'runner could not start');
    expect(refusal?.err).to.match(
      new RegExp(`sandbox uids 61002-61004 \\(RUNBOX_SANDBOX_UID_BASE=61002, 3 slots\\) overlap 61000-61002, held by runner uid-a \\(pid ${a.child.pid}\\)`),
    );
    expect(logs(clash).some((l) => l.msg === 'runner started')).to.equal(false);

    // An explicit base that is free: exactly that range (not the next free one).
    const own = 61100;
    const c = startRunner('uid-c', own);
    expect(await claimed(c)).to.deep.equal([own, own + SLOTS - 1]);

    // A runner killed outright: its lock file stays, but its range is free.
    a.child.kill('SIGKILL');
    await a.exited;
    expect(await lockFiles()).to.include('uids-61000-61002.lock');
    const d = startRunner('uid-d', 61000);
    expect(await claimed(d)).to.deep.equal([61000, 61002]);

    // A runner stopped gracefully gives its range back, and the next unset one takes it.
    b.child.kill('SIGTERM');
    expect(await b.exited, b.lines.slice(-20).join('\n')).to.equal(0);
    expect(await lockFiles()).to.not.include('uids-61003-61005.lock');
    const e = startRunner('uid-e', undefined);
    expect(await claimed(e)).to.deep.equal([61003, 61005]);

    for (const r of [c, d, e]) r.child.kill('SIGTERM');
    for (const r of [c, d, e]) expect(await r.exited).to.equal(0);
    expect(await lockFiles()).to.deep.equal([]);
  });

  it('a SIGTERM while the runner is still starting stops it cleanly once started, its range given back', async () => {
    const f = startRunner('uid-f', undefined);
    while (!logs(f).some((l) => l.msg === 'sandbox uids claimed')) {
      if (f.child.exitCode !== null) throw new Error(f.lines.join('\n'));
      await new Promise((res) => setTimeout(res, 5));
    }
    f.child.kill('SIGTERM');
    expect(await f.exited, f.lines.slice(-20).join('\n')).to.equal(0);
    expect(await lockFiles()).to.deep.equal([]);
  });
});
