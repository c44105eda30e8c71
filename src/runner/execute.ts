import { existsSync } from 'node:fs';
import { compilerEntry } from '../compilers/catalogue.js';
import { imageRootfs } from '../compilers/availability.js';
import { RETURN_FILES_LIMITS, SESSION_LIMITS } from '../limits.js';
import { planProgram, syntaxChecked, type StagePlan } from '../program/plan.js';
import type { Execution, ReturnedFiles, RunResult } from '../result.js';
import type { Sandbox, SandboxOutcome, SandboxSpec, StageFile } from '../sandbox/spec.js';
import type { ClaimedJob } from '../queue/job.js';
import { lineBufferedEnv } from './line-buffering.js';
import { buildErrorText, buildProgram, stageLimits, type Built } from './build.js';
import { checkerMessage } from '../judge/verdict.js';
import { HelperNotBuilt, judgeTests, prepareJudging, type JudgeDeps, type Judging } from './judge.js';
import { withIncluded } from '../problems/include.js';
import { judgeAnswers } from './answers.js';
import { returnedFiles } from './returned-files.js';
import { executionFields, NotStarted, resultLimits } from './verdict.js';

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
  /** What judged runs read: stored problems' versions, their test data, built checkers. */
  judge?: JudgeDeps;
  /** A session's run (src/sessions): the workspace it starts with, and what it leaves. */
  session?: SessionStages;
}

/** A session's workspace in and out of its run's stages. */
export interface SessionStages {
  /** Placed in /box in each stage beside the program's own files (which win by name, keeping the workspace file's mode). */
  workspace: StageFile[];
  /** Set from the run stage: the regular files it left in /box; undefined when no run stage ran (a compile error). */
  left?: StageFile[];
  /** Sandbox time of every stage, milliseconds (the session's billed sandbox seconds). */
  sandboxMs: number;
}

/** A stage's files over the session's workspace: the stage's own win by name and take the workspace file's mode (an executable stays one). */
function overWorkspace(planned: StageFile[], workspace: StageFile[]): StageFile[] {
  const modes = new Map(workspace.map((f) => [f.name, f.mode]));
  const own = new Set(planned.map((f) => f.name));
  return [...workspace.filter((f) => !own.has(f.name)), ...planned.map((f) => ({ ...f, mode: modes.get(f.name) ?? f.mode }))];
}

export type JobToRun = Pick<ClaimedJob, 'id' | 'compiler' | 'code' | 'input' | 'tests' | 'extra_params'> &
  Partial<Pick<ClaimedJob, 'run_options' | 'mode'>>;

export async function executeJob(job: JobToRun, sandbox: Sandbox, deps: ExecuteDeps): Promise<RunResult> {
  const entry = compilerEntry(job.compiler, deps.recipesDir);
  if (!entry) throw new NotStarted(`compiler ${job.compiler} is not in the catalogue`);
  const rootfs = imageRootfs(deps.imagesDir, entry.image);
  if (!existsSync(rootfs)) throw new NotStarted(`image ${entry.image} is not installed`);

  const options = job.run_options ?? {};
  const session = deps.session;
  // A session's command runs as it is in the workspace: no recipe, no compile stage.
  const command = options.session?.run === 'command' ? options.session.command : undefined;
  let plan = command ? undefined : planProgram(entry, job, { syntaxCheck: syntaxChecked(entry, job.run_options, job.mode) });
  const multiTest = !!job.tests && job.tests.length > 0;
  const stage = (kind: 'compile' | 'run', planned: StagePlan, stdin: string | Buffer | { file: string }, judged?: SandboxSpec['judged'], link?: SandboxSpec['link']): Promise<SandboxOutcome> => {
    if (deps.signal?.aborted) throw new NotStarted('the run was aborted');
    const files = session ? overWorkspace(planned.files, session.workspace) : planned.files;
    const spec: SandboxSpec = { rootfs, argv: planned.argv, files, dirs: planned.dirs, slot: deps.slot };
    if (typeof stdin === 'object' && !Buffer.isBuffer(stdin)) spec.stdinFile = stdin.file;
    else spec.stdin = stdin;
    if (judged) spec.judged = judged;
    if (link) spec.link = link;
    const limits = stageLimits(kind === 'compile' ? options.compile : options.run);
    if (limits) spec.limits = limits;
    if (entry.env) spec.env = entry.env;
    if (planned.collect.length > 0) spec.collect = planned.collect;
    if (kind === 'run') {
      spec.collectBounds = { bytes: RETURN_FILES_LIMITS.bytesMax, files: RETURN_FILES_LIMITS.filesMax };
      if (deps.onOutput) spec.onOutput = deps.onOutput;
      // Interactive input belongs to a single run; a multi-test request has none.
      if (deps.stdinFeed && !multiTest && !judged && !link) {
        spec.stdinFeed = deps.stdinFeed;
        spec.env = { ...spec.env, ...lineBufferedEnv(rootfs) };
      }
    }
    if (session && kind === 'run') {
      // The whole workspace comes back, to be the session's for its next run.
      spec.collect = ['./'];
      spec.collectBounds = { bytes: SESSION_LIMITS.workspaceBytes, files: SESSION_LIMITS.workspaceFiles };
    }
    if (deps.signal) spec.signal = deps.signal;
    if (!session) return sandbox.run(spec);
    return sandbox.run(spec).then((outcome) => {
      session.sandboxMs += outcome.wallMs;
      // Files cut short by a broken stream are not the workspace: the one before the run stays.
      if (kind === 'run') session.left = outcome.collectLost ? undefined : outcome.collected;
      return outcome;
    });
  };

  const base = { id: job.id, compiler: job.compiler, extra_params: job.extra_params ?? null };
  // The limits every run of the program had: a timeout's limit_exceeded names one of them.
  const limits = resultLimits(stageLimits(options.run));
  // A judged run's checker and interactor are made ready first: a checker that does not
  // build ends the request before the program is compiled, as a compile error (billed).
  let judging: Judging | null = null;
  try {
    judging = options.judge ? await prepareJudging(job, options.judge, sandbox, deps) : null;
  } catch (err) {
    if (!(err instanceof HelperNotBuilt)) throw err;
    return { ...compileError(base, err.built), verdict: 'checker_error', score: 0, checker_message: checkerMessage(err.message) };
  }
  // A submit-answer problem's submission is its files, judged as outputs: nothing is built or run.
  if (judging?.answers && plan) {
    const main = { name: job.run_options?.main ?? plan.main, content_base64: Buffer.from(job.code, 'utf8').toString('base64') };
    return { ...(await judgeAnswers(judging, base, [main, ...(job.run_options?.files ?? [])])), limits };
  }
  // A stored problem's included files (a grader, a stub) are copied over the submission before it is built.
  if (plan && judging && judging.included.length > 0) plan = planProgram(entry, withIncluded(job, entry, judging.included), { syntaxCheck: syntaxChecked(entry, job.run_options, job.mode) });
  const built: Built = command || !plan ? { ok: true, run: { argv: command ?? [], files: [], dirs: [], collect: [] }, compileOutput: null } : await buildProgram(plan, (planned) => stage('compile', planned, ''));
  if (!built.ok) {
    const result = { ...compileError(base, built), limits };
    return judging ? { ...result, verdict: 'compile_error', score: 0, checker_message: null } : result;
  }
  const compileOutput = built.compileOutput;
  const run: StagePlan = built.run;
  if (judging) {
    const judged = await judgeTests(judging, {
      base: { ...base, compile_output: compileOutput },
      returnFiles: options.return_files === true,
      run: (input, judged, link) => stage('run', run, input, judged, link),
    });
    return { ...judged, limits };
  }

  const inputs = multiTest ? job.tests!.map((t) => t.input) : [job.input ?? ''];
  const runs: { fields: Execution & Partial<ReturnedFiles>; outcome: SandboxOutcome }[] = [];
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
    limits,
    stdout_truncated: shown.outcome.stdoutTruncated,
    stderr_truncated: shown.outcome.stderrTruncated,
    compile_output: compileOutput,
    ...(options.return_files ? { files, files_truncated, files_dropped } : {}),
    ...(multiTest ? { tests: runs.map((r) => r.fields) } : {}),
  };
}

function compileError(base: Pick<RunResult, 'id' | 'compiler' | 'extra_params'>, built: Extract<Built, { ok: false }>): RunResult {
  // A compiler stopped by a limit, or one that exited 0 without producing the
  // program, is a compile error too; buildErrorText says which.
  const error = buildErrorText(built);
  return {
    ...base,
    ...built.fields,
    status: 'compile_error',
    // A compiler stopped at its timeout is a compile error; the run's limits were not met.
    limit_exceeded: null,
    output: '',
    error,
    stdout_truncated: built.compiled.stdoutTruncated,
    stderr_truncated: built.compiled.stderrTruncated,
    compile_output: error,
  };
}
