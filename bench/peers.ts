import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../src/config.js';
import { parseMountInfo, parseProcCgroup } from '../src/sandbox/cgroups/detect.js';
import { createSandbox, findNsjail } from '../src/sandbox/index.js';
import type { Sandbox, SandboxSpec } from '../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../src/util/paths.js';
import { cpuDelta, runnerCpu } from './cpu.js';
import { cHello } from './floor.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';

// The peers in the same run: the C and Python hello worlds in the same images through
// isolate (ioi/isolate, the sandbox of CMS, Judge0 and Piston: `--init`, `--run`,
// `--cleanup` per run as Judge0 and Piston use it, and one box reused across runs as CMS
// does), a fresh bubblewrap and a fresh nsjail per run, runbox's pooled stage, and the
// floor (the program exec'd directly in its image), interleaved in rounds; each figure
// is a ratio to the floor of its own round. The peers are started from a small native
// harness (bench/native/repeat.c: fork, exec, wait), never from Node, whose spawn costs
// milliseconds of its own; so is the floor (fork, chroot, exec). Their CPU is a cgroup's
// (cpuacct), the harness and all it started: a launcher's processes that its PID
// namespace's end reaps never reach anyone's rusage. runbox's is its runner's process
// and fork server tree (bench/cpu.ts), as in the floor benchmark. isolate is found
// through RUNBOX_ISOLATE (its build's binary; never required): where it cannot run, its
// rows say why and the rest still run. nsjail comes from RUNBOX_NSJAIL or PATH.

const exec = promisify(execFile);
const RUNS = Number(process.env.RUNBOX_BENCH_PEERS_RUNS ?? (QUICK ? 5 : 30));
const ROUNDS = Number(process.env.RUNBOX_BENCH_PEERS_ROUNDS ?? (QUICK ? 1 : 5));
const ISOLATE_BOX = process.env.RUNBOX_BENCH_ISOLATE_BOX ?? '0';
const median = (xs: number[]) => stats(xs).median;

interface Measured {
  cpuMs: number;
  wallMs: number;
}

interface Program {
  name: string;
  rootfs: string;
  /** The program inside the image (the C binary bound at /box in every peer). */
  argv: string[];
  spec: Omit<SandboxSpec, 'slot'>;
  output: string;
}

/** Why isolate cannot be used here (null: it can), and whether its cgroup mode can. */
function probeIsolate(isolate: string | undefined): { unusable: string | null; cgroups: string } {
  if (!isolate) return { unusable: 'RUNBOX_ISOLATE is not set (a built ioi/isolate binary)', cgroups: '' };
  if (!existsSync(isolate)) return { unusable: `RUNBOX_ISOLATE=${isolate} does not exist`, cgroups: '' };
  const run = (args: string[]) => spawnSync(isolate, [`--box-id=${ISOLATE_BOX}`, ...args], { encoding: 'utf8', timeout: 10_000 });
  run(['--cleanup']);
  const init = run(['--init']);
  run(['--cleanup']);
  if (init.status !== 0) return { unusable: `isolate --init failed: ${(init.stderr || init.error?.message || '').trim()}`, cgroups: '' };
  const cg = run(['--cg', '--init']);
  run(['--cg', '--cleanup']);
  // isolate 2's control groups are cgroup v2 only: on a v1 (or hybrid) host it runs without them.
  return { unusable: null, cgroups: cg.status === 0 ? '' : `without --cg: ${(cg.stderr || '').trim().split('\n')[0]}` };
}

/** A cgroup of its own for the harness: its cgroup.procs and CPU counter. */
function cpuCgroup(): { procs: string; usage: string; dir: string } {
  const mounts = parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8'));
  const mine = parseProcCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
  const v1 = mounts.find((m) => m.fsType === 'cgroup' && m.controllers.includes('cpuacct'));
  const v2 = mounts.find((m) => m.fsType === 'cgroup2');
  const at = v1 ? { m: v1, path: mine.get('cpuacct') ?? '/', usage: 'cpuacct.usage' } : v2 ? { m: v2, path: mine.get('') ?? '/', usage: 'cpu.stat' } : null;
  if (!at) throw new Error('no cgroup CPU counter on this host');
  const dir = join(at.m.mountPoint, at.path.slice(at.m.root === '/' ? 0 : at.m.root.length), `runbox-bench-peers-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  return { procs: join(dir, 'cgroup.procs'), usage: join(dir, at.usage), dir };
}

let cg: ReturnType<typeof cpuCgroup>;

async function repeat(harness: string, commands: string[][], chroot?: { root: string; bind?: [string, string] }): Promise<Measured> {
  const argv = [cg.procs, cg.usage, chroot?.root ?? '-', chroot?.bind?.[0] ?? '-', chroot?.bind?.[1] ?? '-', String(RUNS), ...commands.flatMap((c, i) => (i ? [':::', ...c] : c))];
  const { stdout } = await exec(harness, argv, { maxBuffer: 1 << 24 });
  const r = JSON.parse(stdout) as { failed: number; cpuMs: number; tookMs: number[] };
  if (r.failed > 0) throw new Error(`${commands[0]![0]}: ${r.failed} of ${RUNS} runs failed`);
  return { cpuMs: r.cpuMs / RUNS, wallMs: median(r.tookMs) };
}

async function pooled(sb: Sandbox, p: Program): Promise<Measured> {
  await sb.run({ ...p.spec, slot: 0 });
  const took: number[] = [];
  const cpu0 = runnerCpu();
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const r = await sb.run({ ...p.spec, slot: 0 });
    took.push(performance.now() - t);
    if (r.status !== 'exited' || r.stdout.toString() !== p.output) throw new Error(`runbox: ${r.status} ${r.diagnostic ?? ''}`);
  }
  const d = cpuDelta(cpu0, runnerCpu());
  return { cpuMs: (d.selfMs + d.childrenMs) / RUNS, wallMs: median(took) };
}

export async function benchPeers(): Promise<BenchOutcome> {
  const config = loadConfig();
  const sb = await createSandbox(config);
  const rows: Row[] = [];
  const result: Record<string, unknown> = { date: new Date().toISOString(), runs: RUNS, rounds: ROUNDS, launcher: sb.launcher, loadBefore: loadAverage() };
  const dir = mkdtempSync('/dev/shm/runbox-bench-peers-');
  const harness = join(dir, 'repeat');
  execFileSync('gcc', ['-O2', '-o', harness, join(PROJECT_ROOT, 'bench', 'native', 'repeat.c')]);
  const isolatePath = process.env.RUNBOX_ISOLATE;
  const isolate = probeIsolate(isolatePath);
  const nsjail = await findNsjail(config);
  result.isolate = { path: isolatePath ?? null, ...isolate };
  cg = cpuCgroup();
  try {
    const { gcc, rootfs: cRoot, binary } = await cHello(sb);
    const progDir = join(dir, 'prog');
    execFileSync('mkdir', ['-m', '755', progDir]);
    writeFileSync(join(progDir, 'hello'), binary.content, { mode: 0o755 });
    const pyRoot = join(config.RUNBOX_IMAGES_DIR, 'python3.9', 'rootfs');
    const py = ['/usr/bin/python3.9', '-c', "print('hi')"];
    const programs: Program[] = [
      { name: 'C hello', rootfs: cRoot, argv: ['/box/hello'], spec: { rootfs: cRoot, argv: [`./${binary.name}`], files: [binary] }, output: gcc.hello.output },
      { name: 'python hello', rootfs: pyRoot, argv: py, spec: { rootfs: pyRoot, argv: py }, output: 'hi\n' },
    ];
    for (const p of programs) {
      // The same binds in every peer: the image read-only at /, the C binary's directory at /box.
      const bwrap = ['/usr/bin/bwrap', '--unshare-all', '--die-with-parent', '--ro-bind', p.rootfs, '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp', '--ro-bind', progDir, '/box', '--', ...p.argv];
      const nsj = nsjail ? [nsjail, '-Mo', '-Q', '--chroot', p.rootfs, '--bindmount_ro', `${progDir}:/box`, '--user', '65534', '--group', '65534', '--nice_level', '0', '--', ...p.argv] : null;
      const dirs = ['bin', 'lib', 'lib64', 'usr', 'etc'].filter((d) => existsSync(join(p.rootfs, d))).map((d) => `--dir=/${d}=${join(p.rootfs, d)}`);
      const box = `--box-id=${ISOLATE_BOX}`;
      const iso = isolatePath && !isolate.unusable ? {
        init: [isolatePath, box, '--init'],
        run: [isolatePath, box, ...dirs, `--dir=/prog=${progDir}`, '--run', '--', ...p.argv.map((a) => a.replace('/box/hello', '/prog/hello'))],
        cleanup: [isolatePath, box, '--cleanup'],
      } : null;
      const contenders: Record<string, () => Promise<Measured>> = {
        floor: () => repeat(harness, [p.argv], { root: p.rootfs, ...(p.name === 'C hello' ? { bind: [progDir, '/box'] as [string, string] } : {}) }),
        'runbox, pooled stage': () => pooled(sb, p),
        'bubblewrap, fresh per run': () => repeat(harness, [bwrap]),
        ...(nsj ? { 'nsjail, fresh per run': () => repeat(harness, [nsj]) } : {}),
        ...(iso ? {
          'isolate, --init, --run, --cleanup per run': () => repeat(harness, [iso.init, iso.run, iso.cleanup]),
          'isolate, one box reused (CMS)': async () => {
            await exec(iso.init[0]!, iso.init.slice(1));
            try {
              return await repeat(harness, [iso.run]);
            } finally {
              await exec(iso.cleanup[0]!, iso.cleanup.slice(1));
            }
          },
        } : {}),
      };
      // Warm: the page cache, the slot's pooled sandbox.
      for (const f of Object.values(contenders)) await f();
      const rounds: Record<string, Measured>[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const round: Record<string, Measured> = {};
        for (const [name, f] of Object.entries(contenders)) round[name] = await f();
        rounds.push(round);
      }
      result[p.name] = rounds;
      const ratio = (name: string, k: keyof Measured) => median(rounds.map((x) => x[name]![k] / x.floor![k]));
      const peers = Object.keys(contenders).filter((n) => n !== 'floor' && n !== 'runbox, pooled stage');
      // runbox below every peer, CPU and wall, in every round.
      const below = rounds.every((x) => peers.every((n) => x['runbox, pooled stage']!.cpuMs < x[n]!.cpuMs && x['runbox, pooled stage']!.wallMs < x[n]!.wallMs));
      for (const name of Object.keys(contenders)) {
        if (name === 'floor') continue;
        const cpu = median(rounds.map((x) => x[name]!.cpuMs));
        const beyond = median(rounds.map((x) => x[name]!.cpuMs - x.floor!.cpuMs));
        const floorCpu = median(rounds.map((x) => x.floor!.cpuMs));
        const wall = median(rounds.map((x) => x[name]!.wallMs));
        const floorWall = median(rounds.map((x) => x.floor!.wallMs));
        const label = name.startsWith('isolate') && isolate.cgroups ? `${name}, without --cg` : name;
        const isRunbox = name === 'runbox, pooled stage';
        rows.push(row({ benchmark: 'peers', figure: `${p.name}, ${label}, CPU per run (+${beyond.toFixed(2)} ms beyond the floor)`, unit: 'ms', value: cpu, baseline: floorCpu, baselineIs: "exec'd in its image, same round", ratio: +ratio(name, 'cpuMs').toFixed(2), target: isRunbox ? 'below every peer, every round' : 'report', met: isRunbox ? below : null }));
        rows.push(row({ benchmark: 'peers', figure: `${p.name}, ${label}, median wall per run`, unit: 'ms', value: wall, baseline: floorWall, baselineIs: "exec'd in its image, same round", ratio: +ratio(name, 'wallMs').toFixed(2), target: isRunbox ? 'below every peer, every round' : 'report', met: isRunbox ? below : null }));
      }
      if (iso && isolate.cgroups) rows.push(row({ benchmark: 'peers', figure: `${p.name}, isolate ran ${isolate.cgroups} (isolate 2's control groups are cgroup v2 only)`, unit: 'ms', value: 0, baseline: null, baselineIs: '', target: 'report', met: null }));
      if (!iso) rows.push(row({ benchmark: 'peers', figure: `${p.name}, isolate: not run (${isolate.unusable})`, unit: 'ms', value: 0, baseline: null, baselineIs: '', target: 'report', met: null }));
      if (!nsj) rows.push(row({ benchmark: 'peers', figure: `${p.name}, nsjail: not run (not found: RUNBOX_NSJAIL or PATH)`, unit: 'ms', value: 0, baseline: null, baselineIs: '', target: 'report', met: null }));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    try {
      rmdirSync(cg.dir);
    } catch {
      // still busy: left for the operator
    }
    await sb.close?.();
  }
  result.loadAfter = loadAverage();
  console.error(`peers: written to ${writeResult('peers', result)}`);
  return { result, rows };
}

runIfMain(import.meta.url, benchPeers);
