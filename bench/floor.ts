import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compilerEntry } from '../src/compilers/catalogue.js';
import { loadConfig } from '../src/config.js';
import { executeJob } from '../src/runner/execute.js';
import { planProgram } from '../src/program/plan.js';
import { createSandbox } from '../src/sandbox/index.js';
import type { Sandbox, SandboxSpec, StageFile } from '../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../src/util/paths.js';
import { cpuDelta, runnerCpu } from './cpu.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';

// Runs against the physical floor: the same program exec'd directly in its image by a
// minimal native harness (bench/native/floor.c: fork, chroot, exec), one after another
// and as many at a time as there are slots, CPU from the children's rusage. Beside it,
// the same program through the sandbox (the runner's own path: Sandbox.run), its CPU
// being everything the runner's process and its fork server's tree spent, and a
// multi-test request (the runner's executeJob: compile once, one run per test). The
// ratios are the performance targets of pooled sandboxes. Floor and sandbox alternate in
// rounds (RUNBOX_BENCH_FLOOR_ROUNDS, RUNBOX_BENCH_FLOOR_RUNS runs each): every figure is
// the median of its rounds, and so is the sandbox's own CPU (each round's difference).

const exec = promisify(execFile);
const RUNS = Number(process.env.RUNBOX_BENCH_FLOOR_RUNS ?? (QUICK ? 20 : 100));
const TESTS = Number(process.env.RUNBOX_BENCH_FLOOR_TESTS ?? (QUICK ? 20 : 200));
/** Rounds of each measurement, floor and sandbox alternating: a shared host drifts, and
 *  each figure is the median of its rounds (the ratio of each round's pair likewise). */
const ROUNDS = Number(process.env.RUNBOX_BENCH_FLOOR_ROUNDS ?? (QUICK ? 1 : 5));
const MULTI_ROUNDS = QUICK ? 1 : 3;
const SLOTS = 2;

const median = (xs: number[]) => stats(xs).median;

export interface FloorRun {
  runs: number;
  par: number;
  failed: number;
  wallMs: number;
  cpuMs: number;
  tookMs: number[];
}

export function buildHarness(): string {
  const out = join(mkdtempSync(join(tmpdir(), 'runbox-bench-floor-')), 'floor');
  execFileSync('gcc', ['-O2', '-o', out, join(PROJECT_ROOT, 'bench', 'native', 'floor.c')]);
  return out;
}

export async function floor(harness: string, rootfs: string, n: number, par: number, argv: string[], bind?: [string, string]): Promise<FloorRun> {
  const { stdout } = await exec(harness, [rootfs, String(n), String(par), bind?.[0] ?? '-', bind?.[1] ?? '-', ...argv], { maxBuffer: 1 << 24 });
  const r = JSON.parse(stdout) as FloorRun;
  if (r.failed > 0) throw new Error(`the floor harness saw ${r.failed} failed runs of ${argv.join(' ')}`);
  return r;
}

/** The C hello world (gcc-4.9's recipe), compiled once in its image through the sandbox. */
export async function cHello(sb: Sandbox): Promise<{ gcc: NonNullable<ReturnType<typeof compilerEntry>>; rootfs: string; binary: StageFile }> {
  const gcc = compilerEntry('gcc-4.9');
  if (!gcc?.compile) throw new Error('no gcc-4.9 recipe');
  const rootfs = join(loadConfig().RUNBOX_IMAGES_DIR, gcc.image, 'rootfs');
  const plan = planProgram(gcc, { code: gcc.hello.code });
  const built = await sb.run({ rootfs, argv: plan.compile!.argv, files: plan.files, collect: plan.compile!.collect, slot: 0 });
  const binary = built.collected[0];
  if (!binary) throw new Error(`compiling the C hello world failed: ${built.stderr.toString()}`);
  return { gcc, rootfs, binary };
}

/** `n` runs through the sandbox, `par` at a time (one slot each): wall, and the CPU of the runner's whole tree. */
async function boxed(sb: Sandbox, n: number, par: number, spec: Omit<SandboxSpec, 'slot'>, expect: string): Promise<{ wallMs: number; cpuMs: number; tookMs: number[] }> {
  const took: number[] = [];
  let next = 0;
  // Steady state: the slots' pooled sandboxes stand before and after (runnerCpu counts the
  // living ones); what making one costs is a row of its own (setUp below).
  for (let slot = 0; slot < par; slot++) await sb.run({ ...spec, slot });
  const cpu0 = runnerCpu();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: par }, async (_, slot) => {
    while (next < n) {
      next++;
      const t = performance.now();
      const r = await sb.run({ ...spec, slot });
      took.push(performance.now() - t);
      if (r.status !== 'exited' || r.stdout.toString() !== expect) throw new Error(`sandboxed run failed: ${r.status} ${r.stdout.toString()} ${r.diagnostic ?? ''}`);
    }
  }));
  const wallMs = performance.now() - t0;
  const d = cpuDelta(cpu0, runnerCpu());
  return { wallMs, cpuMs: d.selfMs + d.childrenMs, tookMs: took };
}

/** CPU of making a pooled sandbox, running one stage in it and removing it, less a stage's own. */
async function setUp(sb: Sandbox, spec: Omit<SandboxSpec, 'slot'>, perRunMs: number, n: number): Promise<number> {
  await sb.close?.();
  const cpu0 = runnerCpu();
  for (let i = 0; i < n; i++) {
    await sb.run({ ...spec, slot: 0 });
    await sb.close?.();
  }
  const d = cpuDelta(cpu0, runnerCpu());
  return (d.selfMs + d.childrenMs) / n - perRunMs;
}

export async function benchFloor(): Promise<BenchOutcome> {
  const config = loadConfig();
  const sb = await createSandbox(config);
  const harness = buildHarness();
  const rows: Row[] = [];
  const result: Record<string, unknown> = { date: new Date().toISOString(), runs: RUNS, tests: TESTS, launcher: sb.launcher, loadBefore: loadAverage() };
  const dir = mkdtempSync('/dev/shm/runbox-bench-floor-');
  try {
    const { gcc, rootfs: cRoot, binary } = await cHello(sb);
    writeFileSync(join(dir, binary.name), binary.content, { mode: 0o755 });

    const pyRoot = join(config.RUNBOX_IMAGES_DIR, 'python3.9', 'rootfs');
    const programs = [
      { name: 'C hello', rootfs: cRoot, floorArgv: [`/tmp/${binary.name}`], bind: [dir, '/tmp'] as [string, string], spec: { rootfs: cRoot, argv: [`./${binary.name}`], files: [binary] }, output: gcc.hello.output },
      { name: 'python hello', rootfs: pyRoot, floorArgv: ['/usr/bin/python3.9', '-c', "print('hi')"], bind: undefined, spec: { rootfs: pyRoot, argv: ['/usr/bin/python3.9', '-c', "print('hi')"] }, output: 'hi\n' },
    ];
    for (const p of programs) {
      // Warm the page cache and the slots' prepared sandboxes.
      await floor(harness, p.rootfs, 3, 1, p.floorArgv, p.bind);
      await boxed(sb, 4, SLOTS, p.spec, p.output);
      const rounds: { floorCpu: number; boxCpu: number; fMed: number; bMed: number; fRate: number; bRate: number }[] = [];
      const raw: unknown[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const f1 = await floor(harness, p.rootfs, RUNS, 1, p.floorArgv, p.bind);
        const b1 = await boxed(sb, RUNS, 1, p.spec, p.output);
        const f2 = await floor(harness, p.rootfs, RUNS, SLOTS, p.floorArgv, p.bind);
        const b2 = await boxed(sb, RUNS, SLOTS, p.spec, p.output);
        rounds.push({
          floorCpu: f1.cpuMs / RUNS,
          boxCpu: b1.cpuMs / RUNS,
          fMed: median(f1.tookMs),
          bMed: median(b1.tookMs),
          fRate: (RUNS / f2.wallMs) * 1000,
          bRate: (RUNS / b2.wallMs) * 1000,
        });
        raw.push({ floor: { one: { ...f1, tookMs: stats(f1.tookMs) }, [SLOTS]: { ...f2, tookMs: stats(f2.tookMs) } }, sandbox: { one: { ...b1, tookMs: stats(b1.tookMs) }, [SLOTS]: { ...b2, tookMs: stats(b2.tookMs) } } });
      }
      const m = (k: keyof (typeof rounds)[number]) => median(rounds.map((x) => x[k]));
      const floorCpu = m('floorCpu');
      const boxCpu = m('boxCpu');
      const own = median(rounds.map((x) => x.boxCpu - x.floorCpu));
      const fMed = m('fMed');
      const bMed = m('bMed');
      const fRate = m('fRate');
      const bRate = m('bRate');
      const rateRatio = median(rounds.map((x) => x.bRate / x.fRate));
      result[p.name] = { rounds, raw, floorCpuMs: floorCpu, ownCpuMs: own };
      rows.push(row({ benchmark: 'floor', figure: `${p.name}, one after another, median wall`, unit: 'ms', value: bMed, baseline: fMed, baselineIs: 'exec\'d in its image', target: 'report', met: null }));
      rows.push(row({ benchmark: 'floor', figure: `${p.name}, CPU per run (runner, fork server and sandbox)`, unit: 'ms', value: boxCpu, baseline: floorCpu, baselineIs: 'exec\'d in its image', target: `sandbox's own ≤ 3 ms (${own.toFixed(1)})`, met: own <= 3 }));
      rows.push(row({ benchmark: 'floor', figure: `${p.name}, runs/s, ${SLOTS} at a time`, unit: 'runs/s', value: bRate, baseline: fRate, baselineIs: `exec'd in its image, ${SLOTS} at a time`, target: p.name === 'python hello' ? `≥ 0.9× (${rateRatio.toFixed(2)}×)` : 'report', met: p.name === 'python hello' ? rateRatio >= 0.9 : null }));
      if (p.name === 'C hello') {
        // Paid once per slot while its stages keep one image and limits: a slot that
        // changes them (another language) makes a new one.
        const made = await setUp(sb, p.spec, boxCpu, QUICK ? 3 : 20);
        result.setUpCpuMs = made;
        rows.push(row({ benchmark: 'floor', figure: 'a pooled sandbox made, used once and removed, CPU beyond the stage', unit: 'ms', value: made, baseline: null, baselineIs: '', target: 'report', met: null }));
      }
    }

    // A multi-test request as the runner runs it: compile once (C), then one run per test.
    for (const [name, compiler, code, ratio] of [
      ['C hello', 'gcc-4.9', gcc.hello.code, 1.5],
      ['python hello', 'python-3.9.7', "print('hi')\n", 1.2],
    ] as const) {
      const job = { id: `bench-${name}`, compiler, code, input: null, tests: Array.from({ length: TESTS }, () => ({ input: '' })), extra_params: null };
      const floorRun = (result[name] as { rounds: { floorCpu: number; fMed: number }[] }).rounds;
      const floorPerRun = median(floorRun.map((x) => x.fMed));
      const floorCpu = median(floorRun.map((x) => x.floorCpu));
      const walls: number[] = [];
      const cpus: number[] = [];
      for (let r = 0; r < MULTI_ROUNDS; r++) {
        // Each request starts without a sandbox for its image (made within it, as for a
        // request that finds its slot serving another language).
        await sb.close?.();
        const cpu0 = runnerCpu();
        const t0 = performance.now();
        const res = await executeJob(job as never, sb, { imagesDir: config.RUNBOX_IMAGES_DIR, slot: 0 });
        const wall = performance.now() - t0;
        const cpu = cpuDelta(cpu0, runnerCpu());
        if (res.status !== 'success' || (res.tests?.length ?? 0) !== TESTS) throw new Error(`multi-test ${name}: ${res.status}`);
        walls.push(wall / TESTS);
        cpus.push((cpu.selfMs + cpu.childrenMs) / TESTS);
      }
      const testCpu = median(cpus);
      const testWall = median(walls);
      result[`multi-test ${name}`] = { wallPerTestMs: walls, cpuPerTestMs: cpus };
      rows.push(row({ benchmark: 'floor', figure: `multi-test, ${TESTS} tests of a ${name}, CPU per test (runner, fork server and sandbox)`, unit: 'ms', value: testCpu, baseline: floorCpu, baselineIs: 'exec\'d in its image', target: `sandbox's own ≤ 3 ms (${(testCpu - floorCpu).toFixed(1)})`, met: testCpu - floorCpu <= 3 }));
      rows.push(row({ benchmark: 'floor', figure: `multi-test, ${TESTS} tests of a ${name}, wall per test`, unit: 'ms', value: testWall, baseline: floorPerRun, baselineIs: 'exec\'d in its image, one after another', target: `≤ ${ratio}×`, met: testWall / floorPerRun <= ratio }));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(harness, '..'), { recursive: true, force: true });
    await sb.close?.();
  }
  result.loadAfter = loadAverage();
  console.error(`floor: written to ${writeResult('floor', result)}`);
  return { result, rows };
}

runIfMain(import.meta.url, benchFloor);
