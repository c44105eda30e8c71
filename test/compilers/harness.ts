import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { readManifest } from '../../src/compilers/availability.js';
import { compilerEntry } from '../../src/compilers/catalogue.js';
import { loadConfig } from '../../src/config.js';
import type { RunResult } from '../../src/result.js';
import { executeJob } from '../../src/runner/execute.js';
import type { ProgramRequest } from '../../src/program/fields.js';
import { readProgram } from '../../src/program/program.js';
import { createSandbox, releasePreparedStages } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/spec.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';

// Runs each identifier's programs through the runner's executeJob and the real sandbox,
// a few at a time: every case of an identifier starts in `before`, and each `it` checks
// its own result, so the suite takes about as long as the slowest few compiles.

export interface Case {
  name: string;
  /** The program as code, or (with `program`) '' and its files. */
  code: string;
  /** The request's other program fields (files, main, args, compiler options, limits, return_files), read as the API reads them. */
  program?: Omit<ProgramRequest, 'code'>;
  input?: string;
  /** A judged run (the request's expected_output compared by lines), as a judge runs a submission. */
  expectedOutput?: string;
  check(r: RunResult): void;
}

/** Slots of their own (a uid each), apart from the runner's and the sandbox suites' (800 unless RUNBOX_TEST_SLOT_BASE moves them all). */
const SLOT_BASE = TEST_SLOT_BASE - 100;
/** Cases of one identifier in flight at once: the host has 2 cores. */
const CONCURRENCY = 3;

const config = loadConfig();
let sandbox: Promise<Sandbox | string> | undefined;

/** One sandbox for every compiler suite of this process, or why there is none. */
function sharedSandbox(): Promise<Sandbox | string> {
  sandbox ??= process.getuid?.() !== 0
    ? Promise.resolve('the sandbox needs root')
    : createSandbox(config).catch((e: Error) => `sandbox not available (${e.message})`);
  return sandbox;
}

type Settled = { ok: true; value: RunResult } | { ok: false; error: unknown };

/** Runs the cases `CONCURRENCY` at a time; the promises never reject (the test awaiting
 *  one may come much later, and an unawaited rejection would end the process). */
function runAll(sb: Sandbox, id: string, cases: Case[]): Map<string, Promise<Settled>> {
  const out = new Map<string, Promise<Settled>>();
  const queue = [...cases];
  const resolvers = new Map<string, (s: Settled) => void>();
  for (const c of cases) out.set(c.name, new Promise((res) => resolvers.set(c.name, res)));
  const worker = async (slot: number) => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      const entry = compilerEntry(id, config.RUNBOX_RECIPES_DIR)!;
      const settled: Settled = await Promise.resolve()
        .then(() => {
          const program = c.program ? readProgram({ ...c.program, ...(c.program.files ? {} : { code: c.code }) }, entry) : { code: c.code, options: {} };
          const judge = c.expectedOutput === undefined ? {} : { judge: { checker: { type: 'lines' as const }, interactor: null, stop_on_failure: false, expected_output: c.expectedOutput } };
          const job = { id: randomUUID(), compiler: id, code: program.code, run_options: { ...program.options, ...judge }, input: c.input ?? null, tests: null, extra_params: null };
          return executeJob(job, sb, { imagesDir: config.RUNBOX_IMAGES_DIR, recipesDir: config.RUNBOX_RECIPES_DIR, slot });
        })
        .then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
      resolvers.get(c.name)!(settled);
    }
  };
  for (let i = 0; i < Math.min(CONCURRENCY, cases.length); i++) void worker(SLOT_BASE + i);
  return out;
}

export function describeCompiler(id: string, cases: Case[]): void {
  const entry = compilerEntry(id, config.RUNBOX_RECIPES_DIR);
  describe(`${id} (${entry?.language ?? 'no recipe'}, image ${entry?.image ?? '?'})`, function () {
    let skipReason: string | undefined;
    let results = new Map<string, Promise<Settled>>();

    before(async function () {
      if (!entry) {
        skipReason = `no recipe serves ${id}`;
        return;
      }
      if (!readManifest(config.RUNBOX_IMAGES_DIR, entry.image)) {
        skipReason = `image ${entry.image} not installed (runbox-admin image build ${id})`;
        return;
      }
      const sb = await sharedSandbox();
      if (typeof sb === 'string') {
        skipReason = sb;
        return;
      }
      results = runAll(sb, id, cases);
    });
    after(async () => {
      await Promise.all(results.values());
      await releasePreparedStages();
    });

    for (const c of cases) {
      it(c.name, async function () {
        if (skipReason) {
          console.log(`      SKIPPED: ${skipReason}`);
          this.skip();
        }
        const settled = await results.get(c.name)!;
        if (!settled.ok) throw settled.error;
        c.check(settled.value);
      });
    }
  });
}

// Checks shared by the language tables.

export function succeeds(output: string): (r: RunResult) => void {
  return (r) => {
    expect(r, r.error || (r.compile_output ?? '')).to.include({ status: 'success', exit_code: 0 });
    expect(r.output).to.equal(output);
  };
}

/** A compile stage that failed: the compiler's messages in compile_output and error, nothing run. */
export function compileError(...messages: (string | RegExp)[]): (r: RunResult) => void {
  return (r) => {
    expect(r.status, r.output + r.error).to.equal('compile_error');
    expect(r.output).to.equal('');
    expect(r.compile_output).to.be.a('string');
    expect(r.error).to.equal(r.compile_output);
    for (const m of messages) {
      if (typeof m === 'string') expect(r.compile_output).to.contain(m);
      else expect(r.compile_output).to.match(m);
    }
  };
}

/** The program ran and exited non-zero by itself. */
export function runtimeError(exitCode: number, stderr?: string | RegExp, stdout?: string): (r: RunResult) => void {
  return (r) => {
    expect(r, r.error).to.include({ status: 'runtime_error', exit_code: exitCode, signal: null });
    if (typeof stderr === 'string') expect(r.error).to.contain(stderr);
    else if (stderr) expect(r.error).to.match(stderr);
    if (stdout !== undefined) expect(r.output).to.equal(stdout);
  };
}

/** Standard input for the echo cases: several lines, non-ASCII text, no final newline. */
export const ECHO_INPUT = 'first line\nsecond: héllo wörld ✓\n\nlast without newline';
