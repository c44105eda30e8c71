import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { compilerEntry } from '../src/compilers/catalogue.js';
import { loadConfig } from '../src/config.js';
import type { JudgeSettings } from '../src/judge/settings.js';
import { sha256 } from '../src/problems/test-data.js';
import { planProgram } from '../src/program/plan.js';
import { BuiltCache } from '../src/runner/built-cache.js';
import { DataCache } from '../src/runner/data-cache.js';
import { executeJob } from '../src/runner/execute.js';
import type { JudgeDeps } from '../src/runner/judge.js';
import { createSandbox } from '../src/sandbox/index.js';
import type { Sandbox, StageFile } from '../src/sandbox/spec.js';
import { PROJECT_ROOT } from '../src/util/paths.js';
import { cpuDelta, runnerCpu, type ProcCpu } from './cpu.js';
import { loadAverage, QUICK, row, runIfMain, stats, writeResult, type BenchOutcome, type Row } from './common.js';

// Judged runs against their floor, measured in the same run:
// - a 100-test problem with a C++ solution and the tokens checker: the runner's wall per
//   test (the solution's stage and the comparison) against the solution exec'd directly
//   in its image plus the same token comparison done natively (bench/native/judge-floor.c);
// - a 16 MiB input and a 16 MiB output through the sandbox, compared byte for byte,
//   against a cat exec'd in the image plus `cmp`;
// - a testlib-convention checker program (C++): what it adds per test over the tokens
//   checker, against the same checker exec'd bare plus one sandboxed stage's own cost
//   (the sandbox's per-test cost in the first row).
// The runner's path is executeJob with a stored problem's tests read through a warm data
// cache (Postgres is not on a judged test's path once the cache holds its files); its
// per-test figures start once the solution is compiled.

const exec = promisify(execFile);
const TESTS = Number(process.env.RUNBOX_BENCH_JUDGE_TESTS ?? (QUICK ? 20 : 100));
const ROUNDS = Number(process.env.RUNBOX_BENCH_JUDGE_ROUNDS ?? (QUICK ? 1 : 3));
const BIG_BYTES = 16 * 1024 * 1024;
const median = (xs: number[]) => stats(xs).median;

/** Sorts the numbers it reads (n, then n integers), one per line. */
const SOLUTION = `#include <algorithm>
#include <cstdio>
#include <vector>
int main() { int n; if (scanf("%d", &n) != 1) return 1; std::vector<long> v(n);
  for (auto& x : v) if (scanf("%ld", &x) != 1) return 1;
  std::sort(v.begin(), v.end());
  for (long x : v) printf("%ld\\n", x); }
`;
/** Copies stdin to stdout. */
const CAT = `#include <unistd.h>
int main(void) { static char b[1 << 16]; ssize_t n; while ((n = read(0, b, sizeof b)) > 0) { char *p = b; while (n > 0) { ssize_t w = write(1, p, (size_t)n); if (w <= 0) return 1; p += w; n -= w; } } return 0; }
`;
/** A testlib-convention checker comparing tokens: argv input output answer, exit 0 or 1. */
const CHECKER = `#include <cstdio>
#include <cstring>
int main(int argc, char** argv) {
  if (argc < 4) return 3;
  FILE* out = fopen(argv[2], "r"); FILE* ans = fopen(argv[3], "r");
  if (!out || !ans) return 3;
  char a[64], b[64]; long k = 0;
  for (;;) { int x = fscanf(out, "%63s", a), y = fscanf(ans, "%63s", b);
    if (x != 1 || y != 1) { if (x == y) { fprintf(stderr, "ok %ld tokens\\n", k); return 0; } fprintf(stderr, "wrong answer length\\n"); return 1; }
    if (strcmp(a, b)) { fprintf(stderr, "wrong answer token %ld\\n", k + 1); return 1; }
    k++; } }
`;

interface Test {
  input: Buffer;
  answer: Buffer;
}

function sortTests(n: number): Test[] {
  let seed = 12345;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  return Array.from({ length: n }, () => {
    const xs = Array.from({ length: 1000 }, () => next() % 1_000_000);
    return { input: Buffer.from(`${xs.length}\n${xs.join(' ')}\n`), answer: Buffer.from(`${[...xs].sort((a, b) => a - b).join('\n')}\n`) };
  });
}

function bigTest(): Test {
  const line = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-=+\n');
  const data = Buffer.alloc(BIG_BYTES);
  for (let at = 0; at < BIG_BYTES; at += line.length) line.copy(data, at, 0, Math.min(line.length, BIG_BYTES - at));
  return { input: data, answer: data };
}

/** A C or C++ program built in its image through the sandbox (as a compile stage would). */
async function build(sb: Sandbox, compiler: string, code: string): Promise<{ rootfs: string; binary: StageFile }> {
  const config = loadConfig();
  const entry = compilerEntry(compiler);
  if (!entry?.compile) throw new Error(`no ${compiler} recipe`);
  const rootfs = join(config.RUNBOX_IMAGES_DIR, entry.image, 'rootfs');
  const plan = planProgram(entry, { code });
  const built = await sb.run({ rootfs, argv: plan.compile!.argv, files: plan.files, collect: plan.compile!.collect, slot: 0 });
  const binary = built.collected.find((f) => !f.name.endsWith('/'));
  if (!binary) throw new Error(`compiling for the bench failed: ${built.stderr.toString()}`);
  return { rootfs, binary };
}

/** The tests as a stored problem's, served to the runner through a data cache on disk. */
function problemDeps(tests: Test[], cacheDir: string): JudgeDeps {
  const store = new Map<string, Buffer>();
  const testList = tests.map((t, i) => {
    for (const b of [t.input, t.answer]) store.set(sha256(b).toString('hex'), b);
    return { name: String(i + 1), inputHash: sha256(t.input), answerHash: sha256(t.answer), inputSize: t.input.length, answerSize: t.answer.length, weight: 1 };
  });
  let checker: JudgeSettings['checker'] = { type: 'tokens' };
  return {
    version: async () => ({ id: 'bench', version: 1, tests: tests.length, limits: {}, checker, interactor: null, testList }),
    data: new DataCache({ dir: cacheDir, maxBytes: 1 << 30, fetch: async (h) => store.get(h.toString('hex')) }),
    built: new BuiltCache(),
    // The checker the job names is set per measurement (below).
    set checker(c: JudgeSettings['checker']) {
      checker = c;
    },
  } as JudgeDeps & { checker: JudgeSettings['checker'] };
}

/** The runner judging every test of the problem: wall per test once the solution is compiled
 *  (and, in `cpu`, the CPU per test of the runner's process and its fork server's tree). */
async function judged(sb: Sandbox, deps: JudgeDeps, compiler: string, code: string, tests: number, cpu?: { perTestMs: number }, viaPipes = false): Promise<number> {
  const config = loadConfig();
  let compiled = 0;
  let cpu0: ProcCpu | null = null;
  // The compile stage is the one that brings files back; the tests start when it is over.
  const timing: Sandbox = { launcher: sb.launcher, run: async (given) => {
    // viaPipes: the input as bytes through the runner and the fork server, as before tests' inputs were given as files.
    let spec = given;
    if (viaPipes && given.stdinFile !== undefined) {
      const { stdinFile, ...rest } = given;
      spec = { ...rest, stdin: readFileSync(stdinFile) };
    }
    const r = await sb.run(spec);
    if (spec.collect && !compiled) {
      compiled = performance.now();
      cpu0 = runnerCpu();
    }
    return r;
  } };
  const judge: JudgeSettings = { checker: { type: 'tokens' }, interactor: null, stop_on_failure: false, problem: { id: 'bench', version: 1 } };
  const job = { id: 'bench-judge', compiler, code, input: null, tests: null, extra_params: null, run_options: { judge } };
  const result = await executeJob(job as never, timing, { imagesDir: config.RUNBOX_IMAGES_DIR, slot: 0, judge: deps });
  const end = performance.now();
  if (cpu && cpu0) {
    const d = cpuDelta(cpu0, runnerCpu());
    cpu.perTestMs = (d.selfMs + d.childrenMs) / tests;
  }
  if (result.verdict !== 'accepted' || result.tests?.length !== tests) throw new Error(`judged bench run: ${result.verdict} ${result.checker_message ?? ''} ${result.error}`);
  return (end - compiled) / tests;
}

async function floorRun(harness: string, rootfs: string, dir: string, n: number, mode: string, argv: string[]): Promise<number> {
  const { stdout } = await exec(harness, [rootfs, dir, String(n), mode, ...argv], { maxBuffer: 1 << 24 });
  const r = JSON.parse(stdout) as { failed: number; tookMs: number[] };
  if (r.failed > 0) throw new Error(`the judge floor harness saw ${r.failed} failed tests (${mode})`);
  return r.tookMs.reduce((a, b) => a + b, 0) / n;
}

function writeTests(dir: string, tests: Test[]): void {
  mkdirSync(join(dir, 'tests'), { recursive: true });
  tests.forEach((t, i) => {
    writeFileSync(join(dir, 'tests', `${i}.in`), t.input);
    writeFileSync(join(dir, 'tests', `${i}.ans`), t.answer);
  });
}

export async function benchJudge(): Promise<BenchOutcome> {
  const config = loadConfig();
  const sb = await createSandbox(config);
  const work = mkdtempSync('/dev/shm/runbox-bench-judge-');
  const cache = mkdtempSync(join(tmpdir(), 'runbox-bench-judge-cache-'));
  const harness = join(work, 'judge-floor');
  execFileSync('gcc', ['-O2', '-o', harness, join(PROJECT_ROOT, 'bench', 'native', 'judge-floor.c')]);
  const rows: Row[] = [];
  const result: Record<string, unknown> = { date: new Date().toISOString(), tests: TESTS, rounds: ROUNDS, launcher: sb.launcher, loadBefore: loadAverage() };
  try {
    const solution = await build(sb, 'g++-9', SOLUTION);
    const cat = await build(sb, 'gcc-9', CAT);
    const checker = await build(sb, 'g++-9', CHECKER);
    const sortDir = join(work, 'sort');
    const bigDir = join(work, 'big');
    const tests = sortTests(TESTS);
    writeTests(sortDir, tests);
    writeTests(bigDir, [bigTest()]);
    writeFileSync(join(sortDir, 'solution'), solution.binary.content, { mode: 0o755 });
    writeFileSync(join(sortDir, 'checker'), checker.binary.content, { mode: 0o755 });
    writeFileSync(join(bigDir, 'cat'), cat.binary.content, { mode: 0o755 });

    const sortDeps = problemDeps(tests, join(cache, 'sort')) as JudgeDeps & { checker: JudgeSettings['checker'] };
    const bigDeps = problemDeps([bigTest()], join(cache, 'big')) as JudgeDeps & { checker: JudgeSettings['checker'] };
    bigDeps.checker = { type: 'exact' };
    const checkerProgram: JudgeSettings['checker'] = { type: 'program', compiler: 'g++-9', code: CHECKER, options: {}, convention: 'testlib' };
    // Warm: the data caches filled, the page cache, the checker built, the slots' sandboxes made.
    await judged(sb, sortDeps, 'g++-9', SOLUTION, TESTS);
    sortDeps.checker = checkerProgram;
    await judged(sb, sortDeps, 'g++-9', SOLUTION, TESTS);
    sortDeps.checker = { type: 'tokens' };
    await judged(sb, bigDeps, 'gcc-9', CAT, 1);
    await floorRun(harness, solution.rootfs, sortDir, TESTS, 'tokens', ['/tmp/solution']);

    const rounds: Record<string, number>[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const floorTokens = await floorRun(harness, solution.rootfs, sortDir, TESTS, 'tokens', ['/tmp/solution']);
      sortDeps.checker = { type: 'tokens' };
      const cpu = { perTestMs: NaN };
      const boxTokens = await judged(sb, sortDeps, 'g++-9', SOLUTION, TESTS, cpu);
      const floorChecker = await floorRun(harness, solution.rootfs, sortDir, TESTS, 'checker:/tmp/checker', ['/tmp/solution']);
      sortDeps.checker = checkerProgram;
      const boxChecker = await judged(sb, sortDeps, 'g++-9', SOLUTION, TESTS);
      const floorBig = await floorRun(harness, cat.rootfs, bigDir, 1, 'cmp', ['/tmp/cat']);
      const boxBig = await judged(sb, bigDeps, 'gcc-9', CAT, 1);
      const boxBigPipes = await judged(sb, bigDeps, 'gcc-9', CAT, 1, undefined, true);
      rounds.push({ boxBigPipes, floorTokens, boxTokens, boxTokensCpu: cpu.perTestMs, floorChecker, boxChecker, floorBig, boxBig });
    }
    result.rounds = rounds;
    const m = (k: string) => median(rounds.map((x) => x[k]!));
    const floorTokens = m('floorTokens');
    const boxTokens = m('boxTokens');
    const tokensRatio = median(rounds.map((x) => x.boxTokens! / x.floorTokens!));
    rows.push(row({ benchmark: 'judge', figure: `${TESTS}-test problem, C++ solution, tokens checker, wall per test`, unit: 'ms', value: boxTokens, baseline: floorTokens, baselineIs: "exec'd in its image + native token compare", target: `≤ 1.5× (${tokensRatio.toFixed(2)}×)`, met: tokensRatio <= 1.5 }));
    // Tests a core judges per second: the inverse of a test's CPU (runner, fork server, sandbox, program).
    const cpuPerTest = m('boxTokensCpu');
    rows.push(row({ benchmark: 'judge', figure: `${TESTS}-test problem, tests per second per core (CPU per test ${cpuPerTest.toFixed(2)} ms)`, unit: 'tests/s', value: 1000 / cpuPerTest, baseline: null, baselineIs: '', target: 'report', met: null }));
    const bigRatio = median(rounds.map((x) => x.boxBig! / x.floorBig!));
    const pipesRatio = median(rounds.map((x) => x.boxBigPipes! / x.floorBig!));
    rows.push(row({ benchmark: 'judge', figure: '16 MiB in and 16 MiB out, the input through the runner and the fork server (as before), compared (exact)', unit: 'ms', value: m('boxBigPipes'), baseline: m('floorBig'), baselineIs: "cat exec'd in its image + cmp", target: `report (${pipesRatio.toFixed(2)}×)`, met: null }));
    rows.push(row({ benchmark: 'judge', figure: '16 MiB in and 16 MiB out through the sandbox, the input as its cached file, compared (exact)', unit: 'ms', value: m('boxBig'), baseline: m('floorBig'), baselineIs: "cat exec'd in its image + cmp", target: `≤ 1.2× (${bigRatio.toFixed(2)}×)`, met: bigRatio <= 1.2 }));
    // What the checker program adds per test, against the checker run bare plus one stage's own cost.
    const added = median(rounds.map((x) => x.boxChecker! - x.boxTokens!));
    const bare = median(rounds.map((x) => x.floorChecker! - x.floorTokens!));
    const stage = median(rounds.map((x) => x.boxTokens! - x.floorTokens!));
    result.checker = { addedMs: added, bareMs: bare, stageOwnMs: stage };
    rows.push(row({ benchmark: 'judge', figure: 'testlib checker program (C++), added per test', unit: 'ms', value: added, baseline: bare + stage, baselineIs: `the checker exec'd bare (${bare.toFixed(1)} ms) + one stage's own cost (${stage.toFixed(1)} ms)`, target: '≤ the checker bare + one stage', met: added <= bare + stage }));
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(cache, { recursive: true, force: true });
    await sb.close?.();
  }
  result.loadAfter = loadAverage();
  console.error(`judge: written to ${writeResult('judge', result)}`);
  return { result, rows };
}

runIfMain(import.meta.url, benchJudge);
