import { expect } from 'chai';
import { StageLink } from '../../src/sandbox/link.js';
import type { Sandbox, SandboxOutcome, SandboxSpec } from '../../src/sandbox/spec.js';
import { expectHostClean, imageSandboxOrSkip, LAUNCHERS, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Two stages joined by their stdio (an interactive test's program and interactor): each
// in a sandbox of the slot's, run at the same time, the fork server passing each one's
// stdout to the other's stdin. Questions and answers go both ways; the end of either
// ends the other's input, and their end times say which ended first; megabytes pass to a partner that reads slowly without being
// lost or filling the server; a write to a partner that has left fails, as into a pipe
// without a reader. Nothing hangs.

for (const launcher of LAUNCHERS) {
  describe(`linked stages (${launcher})`, function () {
    this.timeout(60_000);
    let sb: Sandbox;
    let rootfs: string;
    const slot = TEST_SLOT_BASE + 110 + LAUNCHERS.indexOf(launcher) * 4;

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
    });
    afterEach(() => expectHostClean([slot]));

    const pair = async (a: string, b: string, extra: Partial<SandboxSpec> = {}): Promise<[SandboxOutcome, SandboxOutcome]> => {
      const link = new StageLink();
      const spec = (code: string, lane: 0 | 1): SandboxSpec => ({ rootfs, slot, lane, argv: ['python3.9', '-c', code], link: link.side(lane), ...extra });
      return Promise.all([sb.run(spec(a, 0)), sb.run(spec(b, 1))]);
    };

    it('a question and its answer, both ways', async () => {
      const [a, b] = await pair(
        'import sys\nprint("ping", flush=True)\nsys.stderr.write("got " + input() + "\\n")',
        'line = input()\nprint("pong " + line, flush=True)',
      );
      expect(a.status, a.stderr.toString()).to.equal('exited');
      expect(a.stderr.toString()).to.equal('got pong ping\n');
      expect(b.status).to.equal('exited');
      expect(b.exitCode).to.equal(0);
    });

    it("one side leaving at once ends the other's input: it reads to the end and finishes", async () => {
      const started = Date.now();
      const [a, b] = await pair('pass', 'import sys\ndata = sys.stdin.read()\nsys.stderr.write(f"read {len(data)}\\n")');
      expect(a.exitCode).to.equal(0);
      expect(b.stderr.toString()).to.equal('read 0\n');
      expect(Date.now() - started).to.be.lessThan(10_000);
    });

    it('the side that ended first has the earlier end time, even when its partner ends the moment its input does', async () => {
      // Each side that ends second ends on reading its partner's end, at once: the end
      // times (stamped as each program was reaped, before its output closed) still order them.
      const waits = 'import sys\nsys.stdin.read()';
      for (let k = 0; k < 5; k++) {
        const [a, b] = await pair('pass', waits);
        expect(a.endedAtNs < b.endedAtNs, `run ${k}: the program ended first`).to.equal(true);
        const [c, d] = await pair(waits, 'pass');
        expect(d.endedAtNs < c.endedAtNs, `run ${k}: the interactor ended first`).to.equal(true);
      }
    });

    it('10 MiB to a partner that reads slowly arrive whole, in order', async () => {
      const [a, b] = await pair(
        'import sys\nfor i in range(10 * 1024):\n    sys.stdout.write(str(i % 10) * 1024)\nsys.stdout.flush()',
        'import sys, time, hashlib\ntime.sleep(1)\ndata = sys.stdin.buffer.read()\nsys.stderr.write(f"{len(data)} {hashlib.sha256(data).hexdigest()[:16]}\\n")',
      );
      expect(a.exitCode, a.stderr.toString()).to.equal(0);
      const { createHash } = await import('node:crypto');
      const expected = Buffer.concat(Array.from({ length: 10 * 1024 }, (_, i) => Buffer.alloc(1024, 0x30 + (i % 10))));
      expect(b.stderr.toString()).to.equal(`${10 * 1024 * 1024} ${createHash('sha256').update(expected).digest('hex').slice(0, 16)}\n`);
      // Passed on, not counted as output: no flood.
      expect(a.status).to.equal('exited');
    });

    it('writing to a partner that has left fails (a broken pipe), it does not block', async () => {
      const started = Date.now();
      const [a, b] = await pair('import sys\nfor i in range(100000):\n    sys.stdout.write("x" * 1024)\n    sys.stdout.flush()', 'pass');
      expect(b.exitCode).to.equal(0);
      expect(a.status).to.be.oneOf(['exited', 'signaled']);
      expect(a.exitCode).to.not.equal(0);
      expect(a.stderr.toString()).to.match(/BrokenPipeError|^$/);
      expect(Date.now() - started).to.be.lessThan(20_000);
    });
  });
}
