import { expect } from 'chai';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import type { JudgeSettings } from '../../src/judge/settings.js';
import { sha256 } from '../../src/problems/test-data.js';
import { BuiltCache } from '../../src/runner/built-cache.js';
import { DataCache } from '../../src/runner/data-cache.js';
import { executeJob } from '../../src/runner/execute.js';
import type { JudgeDeps } from '../../src/runner/judge.js';
import type { Sandbox, StageFile } from '../../src/sandbox/spec.js';
import { expectHostClean, imageRootfs, imageSandboxOrSkip, LAUNCHERS, staticBinary, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// A stored test's input reaches its program as the runner host's cached file, opened
// read-only and passed as the program's stdin (no pipe, no copy through the runner or
// the fork server). What the program can do with it: read it, seek in it, reopen it
// read-only through /dev/stdin; not write it, not reopen it for writing, not reach the
// cache's directory or any other test's file through it.

const PROBE = `#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static const char *e(long r) { static char b[16]; if (r >= 0) return "ok"; snprintf(b, sizeof b, "E%d", errno); return b; }
int main(void) {
  struct stat st;
  fstat(0, &st);
  char buf[256] = "";
  ssize_t n = read(0, buf, sizeof buf - 1);
  buf[n > 0 ? n : 0] = 0;
  printf("regular %d size %lld\\n", S_ISREG(st.st_mode), (long long)st.st_size);
  printf("read %s", buf);
  printf("seek %s\\n", e(lseek(0, 0, SEEK_SET)));
  printf("write %s\\n", e(write(0, "x", 1)));
  printf("fl %d\\n", fcntl(0, F_GETFL) & O_ACCMODE);
  printf("reopen-ro %s\\n", e(open("/dev/stdin", O_RDONLY)));
  printf("reopen-rw %s\\n", e(open("/dev/stdin", O_RDWR)));
  printf("reopen-wo %s\\n", e(open("/proc/self/fd/0", O_WRONLY | O_TRUNC)));
  printf("sibling %s\\n", e(openat(0, "../x", O_RDONLY)));
  char where[4096] = "";
  ssize_t l = readlink("/proc/self/fd/0", where, sizeof where - 1);
  where[l > 0 ? l : 0] = 0;
  char *slash = strrchr(where, '/');
  if (slash) *slash = 0;
  printf("cache dir %s\\n", e(open(where, O_RDONLY | O_DIRECTORY)));
  return 0;
}
`;

const EXPECTED = (input: string) =>
  `regular 1 size ${input.length}\nread ${input}seek ok\nwrite E9\nfl 0\nreopen-ro ok\nreopen-rw E13\nreopen-wo E13\nsibling E20\ncache dir E2\n`;

for (const launcher of LAUNCHERS) {
  describe(`a test's input given as a read-only file (${launcher})`, function () {
    this.timeout(180_000);
    let sb: Sandbox;
    let rootfs: string;
    let dir: string;
    const slot = TEST_SLOT_BASE + 70;
    const probe: StageFile = { name: 'probe', mode: 0o755, content: Buffer.alloc(0) };

    before(async function () {
      ({ sb, rootfs } = await imageSandboxOrSkip(this, launcher, 'python3.9'));
      probe.content = staticBinary(PROBE);
      dir = mkdtempSync(join(tmpdir(), 'runbox-stdin-file-'));
    });
    after(async () => {
      await sb?.close?.();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });
    afterEach(() => expectHostClean([slot]));

    const cacheOf = (files: Buffer[]) => {
      const store = new Map(files.map((b) => [sha256(b).toString('hex'), b]));
      return new DataCache({ dir: join(dir, `cache-${Math.random().toString(36).slice(2)}`), maxBytes: 1 << 26, fetch: async (h) => store.get(h.toString('hex')) });
    };

    /** A sandbox that is not pooled (RUNBOX_SANDBOX_POOL=false) is given the file's bytes through a pipe. */
    const pooledOrSkip = (ctx: Mocha.Context) => {
      if (sb.pooled) return;
      console.log('      SKIPPED: the sandbox is not pooled: a file given as stdin reaches it as bytes through a pipe');
      ctx.skip();
    };

    it('the program reads it, seeks in it, reopens it read-only, and can do nothing else with it', async function () {
      pooledOrSkip(this);
      const input = Buffer.from('5 6 7\n');
      const cache = cacheOf([input]);
      const path = await cache.file(sha256(input), input.length);
      expect(statSync(path).mode & 0o777, 'the cached file is root-readable only through a root-only directory').to.equal(0o644);
      expect(statSync(join(path, '..')).mode & 0o777).to.equal(0o700);
      for (let k = 0; k < 2; k++) {
        const r = await sb.run({ rootfs, argv: ['./probe'], files: [probe], stdinFile: path, slot });
        expect([r.status, r.exitCode], r.stderr.toString() + (r.diagnostic ?? '')).to.deep.equal(['exited', 0]);
        expect(r.stdout.toString()).to.equal(EXPECTED(input.toString()));
      }
      expect(statSync(path).size, 'the file is as it was').to.equal(input.length);
    });

    it('a file that is not a regular file is refused, the stage not run', async () => {
      // A sandbox that is not pooled reads the file itself, and fails to read a directory.
      const r = await sb.run({ rootfs, argv: ['./probe'], files: [probe], stdinFile: dir, slot }).catch((e: Error) => e);
      if (sb.pooled) expect((r as { status: string }).status, 'the fork server refuses it').to.equal('internal_error');
      else expect(r).to.be.instanceOf(Error);
    });

    it("a stored problem's tests: each program sees its own test's file and nothing of the others", async function () {
      pooledOrSkip(this);
      const gcc = imageRootfs('gcc');
      if ('skip' in gcc) {
        console.log(`      SKIPPED: ${gcc.skip}`);
        return this.skip();
      }
      const config = loadConfig();
      const inputs = ['first\n', 'second\n', 'third\n'].map((s) => Buffer.from(s));
      const answers = inputs.map((i) => Buffer.from(EXPECTED(i.toString())));
      const data = cacheOf([...inputs, ...answers]);
      const checker: JudgeSettings['checker'] = { type: 'exact' };
      const deps: JudgeDeps = {
        version: async () => ({
          id: 'p', version: 1, tests: inputs.length, limits: {}, checker, interactor: null,
          testList: inputs.map((input, i) => ({ name: String(i + 1), inputHash: sha256(input), answerHash: sha256(answers[i]!), inputSize: input.length, answerSize: answers[i]!.length, weight: 1 })),
        }) as never,
        data,
        built: new BuiltCache(),
      };
      const judge: JudgeSettings = { checker, interactor: null, stop_on_failure: false, problem: { id: 'p', version: 1 } };
      const job = { id: 'stdin-file', compiler: 'gcc-4.9', code: PROBE, input: null, tests: null, extra_params: null, run_options: { judge } };
      const r = await executeJob(job as never, sb, { imagesDir: config.RUNBOX_IMAGES_DIR, slot, judge: deps });
      expect(r.verdict, `${r.compile_output ?? ''} ${r.error ?? ''} ${JSON.stringify(r.tests?.map((t) => t.output))}`).to.equal('accepted');
      expect(r.tests?.map((t) => t.output)).to.deep.equal(answers.map((a) => a.toString()));
    });
  });
}
