import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { expectHostClean, imageSandboxOrSkip, LAUNCHERS, staticBinary, TEST_SLOT_BASE } from '../helpers/sandbox.js';

// A stage that leaves much charged to its cgroup (negative dentries) has it reclaimed by
// the fork server on a thread of its own, and the slot's next stage waits for that
// reclaim's end. A process with nothing else to do (a command-line tool, the
// benchmarks: no server, no timer) must stay alive until then: it once exited in the
// middle of its next `run`, the wait holding no reference on the fork server.

const STORM = `#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
int main(void) {
  char p[96]; struct stat st; long missing = 0, run = (long)time(NULL);
  for (long i = 0; i < 300000; i++) { snprintf(p, sizeof p, "/usr/lib/runbox-missing-%ld-%ld", run, i); if (stat(p, &st) != 0) missing++; }
  printf("%ld\\n", missing);
  return 0;
}
`;

const here = fileURLToPath(new URL('.', import.meta.url));

for (const launcher of LAUNCHERS) {
  describe(`a stage that waits for its slot's reclaim keeps the process alive (${launcher})`, function () {
    this.timeout(120_000);
    let rootfs: string;
    let dir: string;
    const slot = TEST_SLOT_BASE + 72;

    before(async function () {
      const { sb, rootfs: r } = await imageSandboxOrSkip(this, launcher, 'python3.9');
      await sb.close?.();
      rootfs = r;
      dir = mkdtempSync(join(tmpdir(), 'runbox-reclaim-wait-'));
      writeFileSync(join(dir, 'storm'), staticBinary(STORM), { mode: 0o755 });
    });
    after(() => dir && rmSync(dir, { recursive: true, force: true }));
    afterEach(() => expectHostClean([slot]));

    it('the second run of the slot ends, then the process', () => {
      // A process of its own whose event loop holds nothing but the sandbox.
      const script = `
        import { readFileSync } from 'node:fs';
        import { loadConfig } from ${JSON.stringify(join(here, '../../src/config.js'))};
        import { createSandbox } from ${JSON.stringify(join(here, '../../src/sandbox/index.js'))};
        const sb = await createSandbox(loadConfig(), { launcher: ${JSON.stringify(launcher)} });
        const storm = { name: 'storm', mode: 0o755, content: readFileSync(${JSON.stringify(join(dir, 'storm'))}) };
        const first = await sb.run({ rootfs: ${JSON.stringify(rootfs)}, argv: ['./storm'], files: [storm], slot: ${slot} });
        console.log('first', first.status, first.stdout.toString().trim());
        const second = await sb.run({ rootfs: ${JSON.stringify(rootfs)}, argv: ['/bin/echo', 'second'], slot: ${slot} });
        console.log('second', second.status, second.stdout.toString().trim());
        await sb.close();
        console.log('closed');
      `;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 100_000, env: process.env });
      expect({ status: r.status, stdout: r.stdout }, r.stderr).to.deep.equal({ status: 0, stdout: 'first exited 300000\nsecond exited second\nclosed\n' });
    });
  });
}
