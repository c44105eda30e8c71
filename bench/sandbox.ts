import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compilerEntry } from '../src/compilers/catalogue.js';
import { loadConfig } from '../src/config.js';
import { planProgram } from '../src/program/plan.js';
import { createSandbox, findNsjail, type LauncherName } from '../src/sandbox/index.js';
import type { Sandbox } from '../src/sandbox/spec.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';

// What the sandbox adds to a tiny program, per launcher present: the full chain (job
// cgroup, launcher, init, seccomp, workspace in) against the same program run
// bare in the same image, interleaved (and the order rotated each round) so that all
// see the same machine load. Between runs the sandbox prepares the slot's next stage,
// as it does in a runner.
//   python: `python3.9 -c pass` in the python3.9 image; bare is a chroot into it.
//   c:      the gcc image's hello world, compiled once; bare is the same binary started
//           through the image's own dynamic loader and libraries (no chroot needed).
// Also timed, to show what bounds the overhead: bwrap alone with the launcher's
// namespaces and mounts (no job cgroup, init or seccomp).

const exec = promisify(execFile);
const ROUNDS = Number(process.env.RUNBOX_BENCH_ROUNDS ?? (QUICK ? 8 : 60));
/** At most this much added at the median. */
const TARGET_ADDED_MS = 10;
const SLOT = 0;

/** The namespaces and mounts the bwrap launcher sets up, for the bwrap-alone floor. */
function bwrapAloneArgv(rootfs: string, binds: [string, string][], argv: string[]): string[] {
  const out = ['--unshare-user', '--unshare-pid', '--unshare-net', '--unshare-ipc', '--unshare-uts', '--die-with-parent', '--new-session', '--clearenv', '--setenv', 'PATH', '/usr/bin:/bin'];
  out.push('--ro-bind', rootfs, '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/box', '--tmpfs', '/tmp');
  for (const [from, to] of binds) out.push('--ro-bind', from, to);
  return [...out, '--chdir', '/box', '--', ...argv];
}

interface Program {
  name: string;
  bare(): Promise<void>;
  /** bwrap alone with the same namespaces and mounts, no cgroup, init or seccomp: the floor of any bwrap sandbox. */
  bwrapAlone(): Promise<void>;
  boxed(sb: Sandbox): Promise<void>;
  cleanup(): void;
}

async function pythonProgram(imagesDir: string): Promise<Program> {
  const rootfs = join(imagesDir, 'python3.9', 'rootfs');
  const argv = ['/usr/bin/python3.9', '-c', 'pass'];
  return {
    name: 'python3 -c pass',
    bare: async () => void (await exec('/usr/sbin/chroot', [rootfs, ...argv], { env: { PATH: '/usr/bin:/bin' } })),
    bwrapAlone: async () => void (await exec('bwrap', bwrapAloneArgv(rootfs, [], argv))),
    boxed: async (sb) => {
      const r = await sb.run({ rootfs, argv, slot: SLOT });
      if (r.status !== 'exited' || r.exitCode !== 0) throw new Error(`sandboxed python failed: ${r.status} ${r.diagnostic ?? ''}`);
    },
    cleanup: () => {},
  };
}

async function cProgram(imagesDir: string, sb: Sandbox): Promise<Program> {
  const entry = compilerEntry('gcc-4.9');
  if (!entry?.compile) throw new Error('no gcc-4.9 recipe');
  const rootfs = join(imagesDir, entry.image, 'rootfs');
  const plan = planProgram(entry, { code: entry.hello.code });
  const built = await sb.run({ rootfs, argv: plan.compile!.argv, files: plan.files, collect: plan.compile!.collect, slot: SLOT });
  if (built.status !== 'exited' || built.exitCode !== 0 || built.collected.length === 0) {
    throw new Error(`compiling the C hello world failed: ${built.status} ${built.stderr.toString()} ${built.diagnostic ?? ''}`);
  }
  const binary = built.collected[0]!;
  const dir = mkdtempSync('/dev/shm/runbox-bench-c-');
  const path = join(dir, binary.name);
  writeFileSync(path, binary.content, { mode: 0o755 });
  const libs = join(rootfs, 'usr/lib/x86_64-linux-gnu');
  const runArgv = plan.run.argv;
  return {
    name: 'C hello world',
    bare: async () => {
      const { stdout } = await exec(join(libs, 'ld-linux-x86-64.so.2'), ['--library-path', libs, path], { env: { PATH: '/usr/bin:/bin' } });
      if (stdout !== entry.hello.output) throw new Error(`bare C hello printed ${JSON.stringify(stdout)}`);
    },
    bwrapAlone: async () => {
      const { stdout } = await exec('bwrap', bwrapAloneArgv(rootfs, [[path, `/box/${binary.name}`]], runArgv));
      if (stdout !== entry.hello.output) throw new Error(`C hello under bwrap alone printed ${JSON.stringify(stdout)}`);
    },
    boxed: async (s) => {
      const r = await s.run({ rootfs, argv: runArgv, files: [binary], slot: SLOT });
      if (r.status !== 'exited' || r.exitCode !== 0 || r.stdout.toString() !== entry.hello.output) {
        throw new Error(`sandboxed C hello failed: ${r.status} ${r.stdout.toString()} ${r.diagnostic ?? ''}`);
      }
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export async function benchSandbox(): Promise<BenchOutcome> {
  const config = loadConfig();
  const launchers: LauncherName[] = ['bwrap'];
  if (await findNsjail(config)) launchers.push('nsjail');
  const sandboxes = await Promise.all(launchers.map((l) => createSandbox(config, { launcher: l })));
  const programs = [await pythonProgram(config.RUNBOX_IMAGES_DIR), await cProgram(config.RUNBOX_IMAGES_DIR, sandboxes[0]!)];
  const loadBefore = loadAverage();
  const result: Record<string, unknown> = { date: new Date().toISOString(), rounds: ROUNDS, launchers, targetAddedMedianMs: TARGET_ADDED_MS };
  const rows: Row[] = [];
  try {
    for (const p of programs) {
      const bare: number[] = [];
      const alone: number[] = [];
      const boxed: number[][] = launchers.map(() => []);
      // Warm the page cache and each slot's prepared stage before timing.
      await p.bare();
      await p.bwrapAlone();
      for (const sb of sandboxes) await p.boxed(sb);
      const contenders = [() => p.bare(), () => p.bwrapAlone(), ...sandboxes.map((sb) => () => p.boxed(sb))];
      const samples = [bare, alone, ...boxed];
      for (let i = 0; i < ROUNDS; i++) {
        for (let k = 0; k < contenders.length; k++) {
          const j = (i + k) % contenders.length;
          const t0 = performance.now();
          await contenders[j]!();
          samples[j]!.push(performance.now() - t0);
        }
      }
      const b = stats(bare);
      const a = stats(alone);
      const perProgram: Record<string, unknown> = { bare: b, bwrapAlone: { ...a, addedMedian: +(a.median - b.median).toFixed(2) } };
      for (const [j, l] of launchers.entries()) {
        const s = stats(boxed[j]!);
        const addedMedian = +(s.median - b.median).toFixed(2);
        perProgram[l] = { ...s, addedMedian, addedP95: +(s.p95 - b.p95).toFixed(2) };
        rows.push(row({ benchmark: 'sandbox', figure: `${p.name}, ${l}, median`, unit: 'ms', value: s.median, baseline: b.median, baselineIs: 'bare', target: `≤ +${TARGET_ADDED_MS} ms (+${addedMedian.toFixed(1)})`, met: addedMedian <= TARGET_ADDED_MS }));
        rows.push(row({ benchmark: 'sandbox', figure: `${p.name}, ${l}, p95`, unit: 'ms', value: s.p95, baseline: b.p95, baselineIs: 'bare', target: 'report', met: null }));
      }
      rows.push(row({ benchmark: 'sandbox', figure: `${p.name}, bwrap alone (floor), median`, unit: 'ms', value: a.median, baseline: b.median, baselineIs: 'bare', target: 'report', met: null }));
      result[p.name] = perProgram;
    }
  } finally {
    for (const p of programs) p.cleanup();
    await Promise.all(sandboxes.map((sb) => sb.close?.()));
  }
  result.loadAverage = { before: loadBefore, after: loadAverage() };
  console.error(`sandbox: written to ${writeResult('sandbox', result)}`);
  return { result, rows };
}

runIfMain(import.meta.url, benchSandbox);
