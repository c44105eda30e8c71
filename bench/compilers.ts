import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { readManifest } from '../src/compilers/availability.js';
import { catalogue, defaultImages, type CompilerEntry } from '../src/compilers/catalogue.js';
import { loadConfig } from '../src/config.js';
import { planProgram } from '../src/program/plan.js';
import { createSandbox } from '../src/sandbox/index.js';
import { BASE_ENV, SANDBOX_LAYOUT, type Sandbox, type StageFile } from '../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../src/util/paths.js';

// Each identifier's hello program, compile and run stages timed separately: through
// the full sandbox (job cgroup, launcher, init, seccomp, workspace archive in and
// artifacts out) against the same command lines run bare in the same image: a chroot
// in a private mount and PID namespace with /proc, the host's /dev and a tmpfs-backed
// workspace bound at /box, as root, no limits. Sandboxed and bare alternate (their order too) so that both
// see the same machine load.

const exec = promisify(execFile);
const ROUNDS = Number(process.env.RUNBOX_BENCH_ROUNDS ?? 10);
/** Identifiers whose stages take a second or so get fewer rounds. */
const SLOW_ROUNDS = Number(process.env.RUNBOX_BENCH_SLOW_ROUNDS ?? 6);
const SLOW_LANGUAGES = new Set(['java', 'csharp', 'fsharp', 'haskell']);
const SLOT = 0;
/** RUNBOX_BENCH_COMPILERS=gcc-4.9,openjdk-11 limits the run to those identifiers; `all`
 *  takes every installed one. By default: the identifiers of the default images (the
 *  ones every host has), so that a full benchmark run stays a matter of minutes. */
const WANTED = process.env.RUNBOX_BENCH_COMPILERS ?? '';
const ONLY = WANTED.split(',').filter(Boolean);
/** Per-stage overhead the sandbox may add (median against median). */
const TARGET_ADDED_MS = 15;

// The bare stage's only shell: fixed text; the workspace, root and argv arrive as
// positional parameters, never spliced into the script.
// The host's /dev stands in for the sandbox's device nodes (CoreCLR reads /dev/urandom).
const BARE_SCRIPT = 'w=$1; r=$2; shift 2; mount --bind "$w" "$r/box" && mount --bind /dev "$r/dev" && exec chroot "$r" /usr/bin/env -C /box "$@"';

const hostTool = (name: string) => ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].map((d) => `${d}/${name}`).find(existsSync) ?? name;

interface Stats {
  median: number;
  p95: number;
  min: number;
  runs: number;
}

function stats(ms: number[]): Stats {
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return { median: +at(0.5).toFixed(1), p95: +at(0.95).toFixed(1), min: +s[0]!.toFixed(1), runs: s.length };
}

interface Stage {
  argv: string[];
  files: StageFile[];
  collect: string[];
}

interface StageTimes {
  sandbox: number[];
  bare: number[];
}

/** One stage bare: files written to a fresh tmpfs directory, the command run against it, artifacts read back. */
async function bareStage(rootfs: string, workRoot: string, entry: CompilerEntry, stage: Stage): Promise<{ ms: number; stdout: string; collected: StageFile[] }> {
  const t0 = performance.now();
  const work = mkdtempSync(join(workRoot, 'box-'));
  try {
    for (const f of stage.files) writeFileSync(join(work, f.name), f.content, { mode: f.mode });
    const { stdout } = await exec(
      hostTool('unshare'),
      ['--mount', '--pid', '--fork', `--mount-proc=${rootfs}/proc`, 'sh', '-c', BARE_SCRIPT, 'sh', work, rootfs, ...stage.argv],
      { env: { ...BASE_ENV, ...entry.env, PATH: `${BASE_ENV.PATH}:/usr/sbin:/sbin` }, maxBuffer: 16 << 20, encoding: 'utf8' },
    );
    const collected: StageFile[] = [];
    for (const name of stage.collect) {
      const p = join(work, name);
      if (existsSync(p)) collected.push({ name, mode: 0o755, content: readFileSync(p) });
    }
    return { ms: performance.now() - t0, stdout, collected };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

async function sandboxStage(sb: Sandbox, rootfs: string, entry: CompilerEntry, stage: Stage): Promise<{ ms: number; stdout: string; collected: StageFile[] }> {
  const t0 = performance.now();
  const r = await sb.run({ rootfs, argv: stage.argv, files: stage.files, collect: stage.collect, stdin: '', slot: SLOT, ...(entry.env ? { env: entry.env } : {}) });
  const ms = performance.now() - t0;
  if (r.status !== 'exited' || r.exitCode !== 0) {
    throw new Error(`${entry.id}: sandboxed ${stage.argv[0]} ended ${r.status} ${r.exitCode ?? ''}: ${r.stderr.toString().slice(0, 400)} ${r.diagnostic ?? ''}`);
  }
  return { ms, stdout: r.stdout.toString(), collected: r.collected };
}

export async function benchCompilers(): Promise<Record<string, unknown>> {
  const config = loadConfig();
  const sb = await createSandbox(config, { launcher: 'bwrap' });
  // Bare workspaces on tmpfs, as the sandbox's are.
  const workRoot = mkdtempSync('/dev/shm/runbox-bench-');
  const results: Record<string, unknown> = {};
  const table: string[][] = [];
  try {
    const cat = catalogue(config.RUNBOX_RECIPES_DIR);
    const defaults = new Set(defaultImages(cat));
    for (const entry of cat.entries.values()) {
      const wanted = WANTED === 'all' || (ONLY.length > 0 ? ONLY.includes(entry.id) : defaults.has(entry.image));
      if (!wanted) continue;
      if (!readManifest(config.RUNBOX_IMAGES_DIR, entry.image)) {
        console.error(`${entry.id}: image ${entry.image} not installed, left out`);
        continue;
      }
      const rootfs = join(config.RUNBOX_IMAGES_DIR, entry.image, 'rootfs');
      const plan = planProgram(entry, { code: entry.hello.code });
      const source = plan.files[0]!;
      const rounds = SLOW_LANGUAGES.has(entry.language) ? SLOW_ROUNDS : ROUNDS;
      const times: Record<'compile' | 'run', StageTimes> = { compile: { sandbox: [], bare: [] }, run: { sandbox: [], bare: [] } };
      for (let i = 0; i < rounds; i++) {
        const sandboxFirst = i % 2 === 0;
        const both = async (name: 'compile' | 'run', stage: (files: StageFile[]) => Stage, files: { sandbox: StageFile[]; bare: StageFile[] }) => {
          const out: { sandbox?: StageFile[]; bare?: StageFile[] } = {};
          for (const kind of sandboxFirst ? (['sandbox', 'bare'] as const) : (['bare', 'sandbox'] as const)) {
            const s = stage(files[kind]);
            const r = kind === 'sandbox' ? await sandboxStage(sb, rootfs, entry, s) : await bareStage(rootfs, workRoot, entry, s);
            if (name === 'run' && r.stdout !== entry.hello.output) throw new Error(`${entry.id} (${kind}): printed ${JSON.stringify(r.stdout)}`);
            times[name][kind].push(r.ms);
            out[kind] = r.collected;
          }
          return out as { sandbox: StageFile[]; bare: StageFile[] };
        };
        let runFiles = { sandbox: [source], bare: [source] };
        if (plan.compile) {
          const { argv, collect } = plan.compile;
          const built = await both('compile', (files) => ({ argv, files, collect }), runFiles);
          runFiles = { sandbox: [source, ...built.sandbox], bare: [source, ...built.bare] };
        }
        await both('run', (files) => ({ argv: plan.run.argv, files, collect: [] }), runFiles);
      }
      const perStage: Record<string, unknown> = {};
      for (const name of ['compile', 'run'] as const) {
        if (times[name].sandbox.length === 0) continue;
        const sandboxed = stats(times[name].sandbox);
        const bare = stats(times[name].bare);
        const addedMedian = +(sandboxed.median - bare.median).toFixed(1);
        // On a loaded host the fastest runs say most about the sandbox's own cost.
        const addedMin = +(sandboxed.min - bare.min).toFixed(1);
        perStage[name] = { bare, sandbox: sandboxed, addedMedian, addedMin, withinTarget: addedMedian <= TARGET_ADDED_MS };
        table.push([entry.id, name, String(rounds), bare.median.toFixed(0), sandboxed.median.toFixed(0), addedMedian.toFixed(0), bare.min.toFixed(0), sandboxed.min.toFixed(0), addedMin.toFixed(0)]);
      }
      results[entry.id] = { image: entry.image, rounds, ...perStage };
      console.error(`${entry.id}: done`);
    }
  } finally {
    await sb.close?.();
    rmSync(workRoot, { recursive: true, force: true });
  }

  const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const result = {
    date: new Date().toISOString(),
    launcher: sb.launcher,
    workspace: SANDBOX_LAYOUT.workspace,
    targetAddedMsPerStage: TARGET_ADDED_MS,
    loadAverageAtEnd: loadavg,
    compilers: results,
  };
  const dir = join(PROJECT_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${result.date.slice(0, 10)}-compilers.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');

  const header = ['identifier', 'stage', 'rounds', 'bare median ms', 'sandboxed median ms', 'added', 'bare min ms', 'sandboxed min ms', 'added'];
  const rows = [header, header.map((h) => '-'.repeat(h.length)), ...table];
  console.log(rows.map((r) => '| ' + r.join(' | ') + ' |').join('\n'));
  console.log(`\nload average ${loadavg}; written to ${file}`);
  return result;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  benchCompilers().then(
    () => process.exit(0),
    (e) => {
      console.error(e);
      process.exit(1);
    },
  );
}
