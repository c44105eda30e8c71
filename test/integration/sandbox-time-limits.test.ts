import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { VERDICT_CODES } from '../../src/limits.js';
import { createSandbox } from '../../src/sandbox/index.js';
import type { Sandbox, SandboxOutcome, SandboxSpec } from '../../src/sandbox/spec.js';
import { expectHostClean, imageSandboxOrSkip, LAUNCHERS, staticBinary, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Time limits as judges give them, under every launcher: a stage's CPU time (all its
// processes) is the time limit and stops it as a `timeout` with limit "cpu", whether the
// limit is a whole second or not; the CPU-time rlimit is only a backstop, and a process it
// stops is a timeout too; a program that sleeps is stopped at the wall-clock limit.

const SLOT = TEST_SLOT_BASE + 30;

const C_LOOP = 'int main(void) { volatile unsigned long n = 0; for (;;) n++; }\n';
const PY_LOOP = 'while True: pass';

const timedOut = (r: SandboxOutcome) => [r.status, r.limitExceeded, r.exitCode, r.signal];

for (const launcher of LAUNCHERS) {
  describe(`sandbox time limits (${launcher})`, function () {
    this.timeout(120_000);
    let sb: Sandbox;
    let rootfs: string;

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
    });

    afterEach(() => expectHostClean([SLOT]));

    // The wall-clock limit is far away: only the CPU time can stop these.
    const run = (argv: string[], cpuTimeMs: number, more: Partial<SandboxSpec> = {}) =>
      sb.run({ rootfs, argv, slot: SLOT, limits: { cpuTimeMs, timeoutMs: 30_000 }, ...more });
    const cLoop = (cpuTimeMs: number) => run(['./loop'], cpuTimeMs, { files: [{ name: 'loop', mode: 0o755, content: staticBinary(C_LOOP) }] });

    for (const seconds of [1, 5]) {
      it(`stops a Python busy loop at a ${seconds} s CPU limit: timeout, limit cpu, past the limit`, async () => {
        const r = await run(['python3.9', '-c', PY_LOOP], seconds * 1000);
        expect(timedOut(r), r.stderr.toString()).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
        expect(r.cpuMs).to.be.a('number').and.greaterThan(seconds * 1000);
      });

      it(`stops a C busy loop at a ${seconds} s CPU limit: timeout, limit cpu, past the limit`, async () => {
        const r = await cLoop(seconds * 1000);
        expect(timedOut(r), r.stderr.toString()).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
        expect(r.cpuMs).to.be.a('number').and.greaterThan(seconds * 1000);
      });
    }

    it('counts a stage\'s processes together: two looping processes stop at the limit of both', async () => {
      const r = await run(['python3.9', '-c', `import os\nos.fork()\n${PY_LOOP}`], 1000);
      expect(timedOut(r)).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
    });

    it('calls a process stopped by the CPU-time rlimit a timeout, whatever the cgroup reads (an rlimit the program lowered itself)', async () => {
      const r = await sb.run({
        rootfs, slot: SLOT, argv: ['python3.9', '-c', `import resource\nresource.setrlimit(resource.RLIMIT_CPU, (1, resource.getrlimit(resource.RLIMIT_CPU)[1]))\n${PY_LOOP}`],
      });
      expect(timedOut(r), r.stderr.toString()).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
    });

    it('lets a program that finishes within its CPU time end as it ended', async () => {
      const r = await run(['python3.9', '-c', 'print(sum(range(100)))'], 1000);
      expect([r.status, r.exitCode, r.stdout.toString(), r.limitExceeded]).to.deep.equal(['exited', 0, '4950\n', undefined]);
    });

    it('stops a program that sleeps past its wall-clock limit: timeout, limit wall', async () => {
      const r = await sb.run({ rootfs, slot: SLOT, argv: ['python3.9', '-c', 'import time; time.sleep(10); print("woke")'], limits: { cpuTimeMs: 1000, timeoutMs: 2500 } });
      expect(timedOut(r)).to.deep.equal(['timeout', 'wall', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
      expect(r.stdout.toString()).to.equal('');
    });
  });
}

// A sandbox for each stage (RUNBOX_SANDBOX_POOL off): the runner reads the job's CPU time itself.
for (const launcher of LAUNCHERS) {
  describe(`sandbox time limits, a sandbox per stage (${launcher})`, function () {
    this.timeout(120_000);
    let sb: Sandbox;
    let rootfs: string;

    before(async function () {
      ({ rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
      sb = await createSandbox({ ...loadConfig(), RUNBOX_SANDBOX_POOL: false }, { launcher });
    });

    after(() => sb?.close?.());

    afterEach(() => expectHostClean([SLOT + 1]));

    it('stops a C busy loop at a 1 s CPU limit: timeout, limit cpu', async () => {
      const r = await sb.run({ rootfs, slot: SLOT + 1, argv: ['./loop'], files: [{ name: 'loop', mode: 0o755, content: staticBinary(C_LOOP) }], limits: { cpuTimeMs: 1000, timeoutMs: 30_000 } });
      expect(timedOut(r), r.stderr.toString()).to.deep.equal(['timeout', 'cpu', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
      expect(r.cpuMs).to.be.a('number').and.greaterThan(1000);
    });

    it('stops a program that sleeps past its wall-clock limit: timeout, limit wall', async () => {
      const r = await sb.run({ rootfs, slot: SLOT + 1, argv: ['python3.9', '-c', 'import time; time.sleep(10)'], limits: { cpuTimeMs: 1000, timeoutMs: 2500 } });
      expect(timedOut(r)).to.deep.equal(['timeout', 'wall', VERDICT_CODES.killedExitCode, VERDICT_CODES.killedSignal]);
    });
  });
}
