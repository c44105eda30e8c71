import { expect } from 'chai';
import type { Sandbox, SandboxSpec, StdinFeed } from '../../src/sandbox/spec.js';
import { expectHostClean, imageSandboxOrSkip, LAUNCHERS, staticBinary, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Input while the program runs (interactive runs): the program's prompt comes out before
// any input is sent, each line given reaches it as it is typed, and the end of input
// closes its stdin. The program's stdin stays a pipe.

/** A feed driven by the test: answers each prompt the program writes with the next line. */
function answering(lines: string[], opts: { end: boolean }) {
  let write: ((b: Buffer) => void) | null = null;
  let end: (() => void) | null = null;
  let detached = false;
  const seen: string[] = [];
  const feed: StdinFeed = {
    attach(w, e) {
      write = w;
      end = e;
      return () => (detached = true);
    },
  };
  const onOutput: SandboxSpec['onOutput'] = (stream, chunk) => {
    if (stream !== 'stdout') return;
    seen.push(chunk.toString());
    if (!chunk.toString().includes('?')) return;
    const next = lines.shift();
    if (next !== undefined) write?.(Buffer.from(`${next}\n`));
    else if (opts.end) end?.();
  };
  return { feed, onOutput, seen, detached: () => detached };
}

const SCANF = `#include <stdio.h>
int main(void){ int a, b; printf("a?\\n"); fflush(stdout);
  if (scanf("%d", &a) != 1) return 2;
  printf("b?\\n"); fflush(stdout);
  if (scanf("%d", &b) != 1) return 3;
  printf("sum %d\\n", a + b); return 0; }
`;

for (const launcher of LAUNCHERS) {
  describe(`input while the program runs (${launcher})`, function () {
    this.timeout(60_000);
    let sb: Sandbox;
    let rootfs: string;
    const slot = TEST_SLOT_BASE + 90 + LAUNCHERS.indexOf(launcher) * 4;

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
    });
    afterEach(() => expectHostClean([slot, slot + 1]));

    it('Python input(): the prompt arrives before any input is sent, each answer as it is typed', async () => {
      const talk = answering(['Ada', 'Lovelace'], { end: false });
      const r = await sb.run({
        rootfs, slot, argv: ['python3.9', '-u', '-c', 'import sys\nf = input("first?\\n")\nl = input("last?\\n")\nprint("hello", f, l, sys.stdin.isatty())'],
        stdinFeed: talk.feed, onOutput: talk.onOutput,
      });
      expect(r.status, r.stderr.toString()).to.equal('exited');
      expect(r.stdout.toString()).to.equal('first?\nlast?\nhello Ada Lovelace False\n');
      expect(talk.seen[0]).to.equal('first?\n');
      expect(talk.detached()).to.equal(true);
    });

    it('C scanf, with input given up front written first', async () => {
      const talk = answering(['5'], { end: false });
      const r = await sb.run({
        rootfs, slot, argv: ['./prog'], files: [{ name: 'prog', mode: 0o755, content: staticBinary(SCANF) }],
        stdin: '37\n', stdinFeed: talk.feed, onOutput: talk.onOutput,
      });
      expect(r.status, r.stderr.toString()).to.equal('exited');
      expect(r.stdout.toString()).to.equal('a?\nb?\nsum 42\n');
    });

    it('the end of input closes the program\'s stdin', async () => {
      const talk = answering(['one', 'two'], { end: true });
      const r = await sb.run({
        rootfs, slot, argv: ['python3.9', '-u', '-c', 'import sys\nn = 0\nprint("line?")\nfor line in sys.stdin:\n  n += 1\n  print("line?")\nprint("lines", n)'],
        stdinFeed: talk.feed, onOutput: talk.onOutput,
      });
      expect(r.status, r.stderr.toString()).to.equal('exited');
      expect(r.stdout.toString()).to.equal('line?\nline?\nline?\nlines 2\n');
    });

    it('a program waiting for input that never comes stops at its timeout', async () => {
      const never: StdinFeed = { attach: () => () => {} };
      const r = await sb.run({ rootfs, slot: slot + 1, argv: ['python3.9', '-c', 'input()'], stdinFeed: never, limits: { timeoutMs: 1500 } });
      expect([r.status, r.exitCode]).to.deep.equal(['timeout', 137]);
    });
  });
}
