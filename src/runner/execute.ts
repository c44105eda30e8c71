import { existsSync } from 'node:fs';
import { compilerEntry } from '../compilers/catalogue.js';
import { imageRootfs } from '../compilers/availability.js';
import type { RunOptions, StageLimits } from '../db/schema.js';
import { clampStageLimit } from '../limits.js';
import type { RunResult, TestResult } from '../result.js';
import type { Sandbox, SandboxOutcome, SandboxSpec, StageFile } from '../sandbox/spec.js';
import type { ClaimedJob } from '../queue/job.js';
import { lineBufferedEnv } from './line-buffering.js';
import { outputText, wholeCharacters } from './output-text.js';
import { artifactNames, CLASS_FILES, placeSource, sourceText, substituteMain } from './source-file.js';
import { executionFields, NotStarted } from './verdict.js';

// One job, start to result: the source goes into the workspace, an optional compile
// stage runs in a sandbox of its own (with its own time budget) and hands its
// artifacts on, then the program runs once per test, each in a fresh sandbox.

export interface ExecuteDeps {
  imagesDir: string;
  /** The operator's recipes directory (config RUNBOX_RECIPES_DIR); empty: the built-in recipes only. */
  recipesDir?: string;
  /** Runner slot: distinct among this runner's concurrent jobs. */
  slot: number;
  signal?: AbortSignal;
  /** The program's output as it is written (run stages only; WebSocket streaming). */
  onOutput?: SandboxSpec['onOutput'];
  /** Input typed while the program runs (an interactive run: its one run stage). */
  stdinFeed?: SandboxSpec['stdinFeed'];
}

export type JobToRun = Pick<ClaimedJob, 'id' | 'compiler' | 'code' | 'input' | 'tests' | 'extra_params'> &
  Partial<Pick<ClaimedJob, 'run_options'>>;

const SOURCE_MODE = 0o644;

export async function executeJob(job: JobToRun, sandbox: Sandbox, deps: ExecuteDeps): Promise<RunResult> {
  const entry = compilerEntry(job.compiler, deps.recipesDir);
  if (!entry) throw new NotStarted(`compiler ${job.compiler} is not in the catalogue`);
  const rootfs = imageRootfs(deps.imagesDir, entry.image);
  if (!existsSync(rootfs)) throw new NotStarted(`image ${entry.image} is not installed`);

  const { fileName, main } = placeSource(entry, job.code);
  const source: StageFile = { name: fileName, mode: SOURCE_MODE, content: Buffer.from(sourceText(entry, job.code), 'utf8') };
  const options = job.run_options ?? {};
  // Files sent with the source are written beside it, in both stages.
  const beside = besideFiles(options, fileName);
  const stage = (argv: string[], files: StageFile[], stdin: string, collect?: string[]): Promise<SandboxOutcome> => {
    if (deps.signal?.aborted) throw new NotStarted('the run was aborted');
    const spec: SandboxSpec = { rootfs, argv, files, stdin, slot: deps.slot };
    const limits = stageLimits(collect ? options.compile : options.run);
    if (limits) spec.limits = limits;
    if (entry.env) spec.env = entry.env;
    if (collect) spec.collect = collect;
    else if (deps.onOutput) spec.onOutput = deps.onOutput;
    // Interactive input belongs to a single run; a multi-test request has none.
    if (!collect && deps.stdinFeed && !(job.tests && job.tests.length > 0)) {
      spec.stdinFeed = deps.stdinFeed;
      spec.env = { ...spec.env, ...lineBufferedEnv(rootfs) };
    }
    if (deps.signal) spec.signal = deps.signal;
    return sandbox.run(spec);
  };

  const base = { id: job.id, compiler: job.compiler, extra_params: job.extra_params ?? null };
  let runFiles: StageFile[] = [source, ...beside];
  let compileOutput: string | null = null;

  if (entry.compile) {
    const wanted = entry.artifacts ?? [];
    // Named artifacts must appear; {classes} is a superset of what javac may write.
    const required = substituteMain(wanted.filter((a) => a !== CLASS_FILES), main);
    const compiled = await stage(substituteMain(entry.compile, main), [source, ...beside], '', artifactNames(wanted, main, job.code));
    const fields = executionFields(compiled);
    compileOutput = outputText(
      Buffer.concat([compiled.stdoutTruncated ? wholeCharacters(compiled.stdout) : compiled.stdout, compiled.stderr]),
      compiled.stderrTruncated,
    );
    const missing = required.filter((name) => !compiled.collected.some((f) => f.name === name));
    if (fields.status !== 'success' || missing.length > 0) {
      return compileError(base, compiled, fields, compileOutput, fields.status === 'success' ? missing : []);
    }
    // What the compiler made wins over a file of the same name sent beside the source.
    runFiles = [source, ...beside.filter((f) => !compiled.collected.some((c) => c.name === f.name)), ...compiled.collected];
  }

  const runArgv = [...substituteMain(entry.run, main), ...(options.args ?? [])];
  const inputs = job.tests && job.tests.length > 0 ? job.tests.map((t) => t.input) : [job.input ?? ''];
  const runs: { fields: TestResult; outcome: SandboxOutcome }[] = [];
  for (const input of inputs) {
    const outcome = await stage(runArgv, runFiles, input);
    runs.push({ fields: executionFields(outcome), outcome });
  }
  const shown = runs.find((r) => r.fields.status !== 'success') ?? runs[runs.length - 1]!;
  return {
    ...base,
    ...shown.fields,
    stdout_truncated: shown.outcome.stdoutTruncated,
    stderr_truncated: shown.outcome.stderrTruncated,
    compile_output: compileOutput,
    ...(job.tests && job.tests.length > 0 ? { tests: runs.map((r) => r.fields) } : {}),
  };
}

/** The run's extra files as stage files; one named like the main source cannot replace it. */
function besideFiles(options: RunOptions, sourceName: string): StageFile[] {
  return (options.files ?? [])
    .filter((f) => f.name !== sourceName)
    .map((f) => ({ name: f.name, mode: SOURCE_MODE, content: Buffer.from(f.content_base64, 'base64') }));
}

/** A stage's own limits, never above the service's (the API clamps them; this holds for any row). */
function stageLimits(given: StageLimits | undefined): SandboxSpec['limits'] | undefined {
  if (!given) return undefined;
  const limits: NonNullable<SandboxSpec['limits']> = {};
  if (given.timeout_ms !== undefined) limits.timeoutMs = clampStageLimit('timeoutMs', given.timeout_ms);
  if (given.memory_bytes !== undefined) limits.memoryBytes = clampStageLimit('memoryBytes', given.memory_bytes);
  return Object.keys(limits).length > 0 ? limits : undefined;
}

function compileError(
  base: Pick<RunResult, 'id' | 'compiler' | 'extra_params'>,
  compiled: SandboxOutcome,
  fields: TestResult,
  messages: string,
  missing: string[],
): RunResult {
  // A compiler stopped by a limit, or one that exited 0 without producing the
  // program, is a compile error too; say which so the user is not left guessing.
  const notes: string[] = [];
  if (fields.status !== 'success' && fields.status !== 'runtime_error') notes.push(`compilation stopped: ${fields.status.replace('_', ' ')}`);
  if (missing.length > 0) notes.push(`compilation produced no ${missing.join(', ')}`);
  let error = messages;
  for (const note of notes) error += (error === '' || error.endsWith('\n') ? '' : '\n') + note + '\n';
  return {
    ...base,
    ...fields,
    status: 'compile_error',
    output: '',
    error,
    stdout_truncated: compiled.stdoutTruncated,
    stderr_truncated: compiled.stderrTruncated,
    compile_output: error,
  };
}
