import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { createSandbox, findNsjail, type LauncherName } from '../src/sandbox/index.js';
import { PROJECT_ROOT } from '../src/util/paths.js';

// What the sandbox adds to a tiny program: `python3.9 -c pass` through the full chain
// (job cgroup, shim, launcher, init, seccomp) against the same binary run bare in the
// same image (chroot), interleaved so that both see the same machine load. Between
// runs the sandbox prepares the slot's next stage, as it does in a runner.

const run = promisify(execFile);
const ROUNDS = Number(process.env.RUNBOX_BENCH_ROUNDS ?? 40);
const ARGV = ['/usr/bin/python3.9', '-c', 'pass'];

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: +at(0.5).toFixed(2), p95: +at(0.95).toFixed(2), min: +s[0]!.toFixed(2), runs: s.length };
}

export async function benchSandbox(): Promise<Record<string, unknown>> {
  const config = loadConfig();
  const rootfs = join(config.RUNBOX_IMAGES_DIR, 'python3.9', 'rootfs');
  const launchers: LauncherName[] = ['bwrap'];
  if (await findNsjail(config)) launchers.push('nsjail');
  const sandboxes = await Promise.all(launchers.map((l) => createSandbox(config, { launcher: l })));

  const bare: number[] = [];
  const boxed: number[][] = launchers.map(() => []);
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    await run('/usr/sbin/chroot', [rootfs, ...ARGV], { env: { PATH: '/usr/bin:/bin' } });
    bare.push(performance.now() - t0);
    for (const [j, sb] of sandboxes.entries()) {
      const t1 = performance.now();
      const r = await sb.run({ rootfs, argv: ARGV, slot: 0 });
      boxed[j]!.push(performance.now() - t1);
      if (r.status !== 'exited' || r.exitCode !== 0) throw new Error(`sandboxed run failed: ${r.status} ${r.diagnostic ?? ''}`);
    }
  }
  await Promise.all(sandboxes.map((sb) => sb.close?.()));
  const result: Record<string, unknown> = { date: new Date().toISOString(), program: ARGV.join(' '), rounds: ROUNDS, bare: stats(bare) };
  for (const [j, l] of launchers.entries()) {
    const s = stats(boxed[j]!);
    result[l] = { ...s, addedMedian: +(s.median - stats(bare).median).toFixed(2) };
  }
  const dir = join(PROJECT_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${result.date!.toString().slice(0, 10)}-sandbox.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  console.log(JSON.stringify(result, null, 2));
  console.log(`written to ${file}`);
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchSandbox().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
