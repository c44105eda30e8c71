import { existsSync } from 'node:fs';
import { compilerEntry } from '../compilers/catalogue.js';
import { imageRootfs } from '../compilers/availability.js';
import type { StageLimits } from '../db/schema.js';
import { clampStageLimit, RETURN_FILES_LIMITS, RUN_LIMITS } from '../limits.js';
import { planProgram, type StagePlan } from '../program/plan.js';
import type { RunResult, TestResult } from '../result.js';
import type { Sandbox, SandboxOutcome, SandboxSpec } from '../sandbox/spec.js';
import type { ClaimedJob } from '../queue/job.js';
import { lineBufferedEnv } from './line-buffering.js';
import { outputText, wholeCharacters } from './output-text.js';
import { returnedFiles } from './returned-files.js';
import { executionFields, NotStarted } from './verdict.js';

// One job, start to result: the program's stages as its recipe plans them
// (src/program/plan.ts), an optional compile stage in a sandbox of its own (with its
// own time budget) that hands its artifacts on, then the program once per test, each
// in a fresh sandbox, bringing back /box/out when the request asked for it.

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

export async function executeJob(job: JobToRun, sandbox: Sandbox, deps: ExecuteDeps): Promise<RunResult> {
  const entry = compilerEntry(job.compiler, deps.recipesDir);
  if (!entry) throw new NotStarted(`compiler ${job.compiler} is not in the catalogue`);
  const rootfs = imageRootfs(deps.imagesDir, entry.image);
  if (!existsSync(rootfs)) throw new NotStarted(`image ${entry.image} is not installed`);

  const plan = planProgram(entry, job);
  const options = job.run_options ?? {};
  const multiTest = !!job.tests && job.tests.length > 0;
  const stage = (kind: 'compile' | 'run', planned: StagePlan, stdin: string): Promise<SandboxOutcome> => {
    if (deps.signal?.aborted) throw new NotStarted('the run was aborted');
    const spec: SandboxSpec = { rootfs, argv: planned.argv, files: planned.files, dirs: planned.dirs, stdin, slot: deps.slot };
    const limits = stageLimits(kind === 'compile' ? options.compile : options.run);
    if (limits) spec.limits = limits;
    if (entry.env) spec.env = entry.env;
    if (planned.collect.length > 0) spec.collect = planned.collect;
    if (kind === 'run') {
      spec.collectBounds = { bytes: RETURN_FILES_LIMITS.bytesMax, files: RETURN_FILES_LIMITS.filesMax };
      if (deps.onOutput) spec.onOutput = deps.onOutput;
      // Interactive input belongs to a single run; a multi-test request has none.
      if (deps.stdinFeed && !multiTest) {
        spec.stdinFeed = deps.stdinFeed;
        spec.env = { ...spec.env, ...lineBufferedEnv(rootfs) };
      }
    }
    if (deps.signal) spec.signal = deps.signal;
    return sandbox.run(spec);
  };

  const base = { id: job.id, compiler: job.compiler, extra_params: job.extra_params ?? null };
  let runFiles = plan.run.files;
  let compileOutput: string | null = null;

  if (plan.compile) {
    const compiled = await stage('compile', plan.compile, '');
    const fields = executionFields(compiled);
    compileOutput = outputText(
      Buffer.concat([compiled.stdoutTruncated ? wholeCharacters(compiled.stdout) : compiled.stdout, compiled.stderr]),
      compiled.stderrTruncated,
    );
    const missing = plan.compile.required.filter((name) => !compiled.collected.some((f) => f.name === name));
    if (fields.status !== 'success' || missing.length > 0 || compiled.omitted.length > 0) {
      const problems = fields.status !== 'success' ? [] : [
        ...(missing.length > 0 ? [`compilation produced no ${missing.join(', ')}`] : []),
        ...(compiled.omitted.length > 0 ? [`compilation produced more than the run stage takes (${compiled.omitted.length} files left out past ${RUN_FILES_NOTE})`] : []),
      ];
      return compileError(base, compiled, fields, compileOutput, problems);
    }
    // What the compiler made wins over a file of the same name in the program.
    const made = new Set(compiled.collected.map((c) => c.name));
    runFiles = [...runFiles.filter((f) => !made.has(f.name)), ...compiled.collected];
  }

  const run: StagePlan = { ...plan.run, files: runFiles };
  const inputs = multiTest ? job.tests!.map((t) => t.input) : [job.input ?? ''];
  const runs: { fields: TestResult; outcome: SandboxOutcome }[] = [];
  for (const input of inputs) {
    const outcome = await stage('run', run, input);
    const fields = executionFields(outcome);
    runs.push({ fields: options.return_files ? { ...fields, ...returnedFiles(outcome) } : fields, outcome });
  }
  const shown = runs.find((r) => r.fields.status !== 'success') ?? runs[runs.length - 1]!;
  const { files, files_truncated, files_dropped, ...shownFields } = shown.fields;
  return {
    ...base,
    ...shownFields,
    stdout_truncated: shown.outcome.stdoutTruncated,
    stderr_truncated: shown.outcome.stderrTruncated,
    compile_output: compileOutput,
    ...(options.return_files ? { files, files_truncated, files_dropped } : {}),
    ...(multiTest ? { tests: runs.map((r) => r.fields) } : {}),
  };
}

const RUN_FILES_NOTE = `${RUN_LIMITS.collectFiles.toLocaleString('en-US')} files or ${RUN_LIMITS.collectBytes / 1024 / 1024} MiB`;

/** A stage's own limits, never above the service's (the API clamps them; this holds for any row). */
function stageLimits(given: StageLimits | undefined): SandboxSpec['limits'] | undefined {
  if (!given) return undefined;
  const limits: NonNullable<SandboxSpec['limits']> = {};
  if (given.timeout_ms !== undefined) limits.timeoutMs = clampStageLimit('timeoutMs', given.timeout_ms);
  if (given.memory_bytes !== undefined) limits.memoryBytes = clampStageLimit('memoryBytes', given.memory_bytes);
  if (given.cpu_ms !== undefined) limits.cpuTimeMs = clampStageLimit('cpuTimeMs', given.cpu_ms);
  return Object.keys(limits).length > 0 ? limits : undefined;
}

function compileError(
  base: Pick<RunResult, 'id' | 'compiler' | 'extra_params'>,
  compiled: SandboxOutcome,
  fields: TestResult,
  messages: string,
  problems: string[],
): RunResult {
  // A compiler stopped by a limit, or one that exited 0 without producing the
  // program, is a compile error too; say which so the user is not left guessing.
  const notes: string[] = [];
  if (fields.status !== 'success' && fields.status !== 'runtime_error') notes.push(`compilation stopped: ${fields.status.replace('_', ' ')}`);
  notes.push(...problems);
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
