import { existsSync, realpathSync } from 'node:fs';
import { imageRootfs } from '../compilers/availability.js';
import { compilerEntry, type CompilerEntry } from '../compilers/catalogue.js';
import type { BuiltinChecker, CheckData, CheckResult } from '../judge/checkers/index.js';
import { graderAnswer, type GroupTree } from '../judge/groups.js';
import { CHECK_FILES, checkerArguments, conventionVerdict, feedbackOf, feedbackPaths, interactorArguments, type Convention } from '../judge/conventions.js';
import type { JudgeSettings, ProgramSource } from '../judge/settings.js';
import { multiPass } from '../judge/multi-pass.js';
import { interactiveVerdict, overallVerdict, SKIPPED, testVerdict, type Judged } from '../judge/verdict.js';
import { interactorTimeoutMs, judgedFloodBytes } from '../limits.js';
import { planProgram, type StagePlan } from '../program/plan.js';
import { includedFor } from '../problems/include.js';
import type { StoredTest, versionForRun } from '../problems/store.js';
import type { RunFile } from '../db/schema.js';
import { notRun, type RunResult, type TestResult } from '../result.js';
import { StageLink } from '../sandbox/link.js';
import type { Sandbox, SandboxOutcome, SandboxSpec, StageFile } from '../sandbox/spec.js';
import { buildErrorText, buildProgram, stageLimits, type Built } from './build.js';
import { BuiltCache } from './built-cache.js';
import { GroupGrading } from './group-results.js';
import { compare } from './check-off-loop.js';
import type { DataCache } from './data-cache.js';
import type { ExecuteDeps, JobToRun } from './execute.js';
import { returnedFiles } from './returned-files.js';
import { executionFields, NotStarted } from './verdict.js';

// A judged run on the runner: its tests (a request's, with their expected outputs, or a
// stored problem version's, read through the host's data cache), its checker (a built-in
// comparison, or a checker program built once and run after each test in a sandboxed
// stage of its own, not billed apart: its stages count in the request's sandbox time),
// each test's verdict, and the request's. With stop_on_failure the tests after the first
// one not accepted are skipped: not run, and not billed (the queue gives their units
// back with the result).

export interface JudgeDeps {
  version: (problemId: string, version: number) => ReturnType<typeof versionForRun>;
  data: DataCache;
  built: BuiltCache;
}

export interface JudgeTest {
  name?: string;
  weight: number;
  /** Its output validator's arguments, after the checker's own (a stored Kattis package's group's). */
  validatorArgs?: string[];
  input(): Promise<Buffer>;
  /** The input as a file on this host (a stored test's, in the data cache): given to the
   *  program as its stdin without being read here. */
  inputFile?(): Promise<string>;
  answer(): Promise<Buffer>;
}

/** A checker or interactor program, built: where and how it runs. */
interface Helper {
  entry: CompilerEntry;
  rootfs: string;
  run: StagePlan;
  convention: Convention;
  /** Arguments after its convention's, before a test's (a Kattis package's validator_flags). */
  args: string[];
}

export interface Judging {
  settings: JudgeSettings;
  tests: JudgeTest[];
  /** A single run (input, no tests): the result has no tests list. */
  single: boolean;
  checker: Helper | null;
  /** An interactive test's interactor (its verdict is the test's; a checker is not run). */
  interactor: Helper | null;
  problem?: { id: string; version: number };
  /** A stored Kattis package's test groups: they say which tests run and give the verdict and score. */
  groups?: GroupTree | null;
  /** A package's limits.output in bytes, below the service's. */
  outputBytes?: number;
  /** The package's custom grader (graders/), built. */
  grader?: Helper | null;
  /** The run stage's limits, which a checker's stage takes too. */
  limits: SandboxSpec['limits'];
  /** A stored problem's files copied over the submission before it is built (src/problems/include.ts); empty: none. */
  included: RunFile[];
  /** A submit-answer problem: the submission's files are the outputs, judged without a run (src/runner/answers.ts). */
  answers: boolean;
  sandbox: Sandbox;
  deps: ExecuteDeps;
}

const NO_BYTES = Buffer.alloc(0);
const text = (s: string) => async () => Buffer.from(s, 'utf8');

/** The tests, checker and problem of a judged job, its checker program built (or found built). */
export async function prepareJudging(job: JobToRun, settings: JudgeSettings, sandbox: Sandbox, deps: ExecuteDeps): Promise<Judging> {
  let tests: JudgeTest[];
  let checker = settings.checker;
  const limits = stageLimits(job.run_options?.run);
  let problem: Judging['problem'];
  let included: RunFile[] = [];
  let answers = false;

  let groups: GroupTree | null = null;
  let outputBytes: number | undefined;
  if (settings.problem) {
    if (!deps.judge) throw new NotStarted('this runner cannot read stored problems');
    const { id, version } = settings.problem;
    const stored = await deps.judge.version(id, version);
    if (!stored) throw new NotStarted(`version ${version} of problem ${id} is gone (replaced or deleted before this run started); run it again`);
    const data = deps.judge.data;
    tests = stored.testList.map((t: StoredTest) => ({
      name: t.name,
      weight: t.weight,
      ...(t.validatorArgs?.length ? { validatorArgs: t.validatorArgs } : {}),
      input: () => data.get(t.inputHash, t.inputSize),
      inputFile: () => data.file(t.inputHash, t.inputSize),
      answer: () => data.get(t.answerHash, t.answerSize),
    }));
    checker = stored.checker;
    settings = { ...settings, checker, interactor: stored.interactor };
    const recipe = compilerEntry(job.compiler, deps.recipesDir);
    if (recipe) included = includedFor(stored.include, recipe);
    answers = stored.submitAnswer === true;
    problem = { id, version };
    groups = stored.groups ?? null;
    if (stored.limits.output !== undefined) outputBytes = stored.limits.output * 1024;
  } else if (job.tests && job.tests.length > 0) {
    tests = job.tests.map((t) => ({ ...(t.name !== undefined ? { name: t.name } : {}), weight: t.weight ?? 1, input: text(t.input), answer: text(t.expected_output ?? '') }));
  } else {
    tests = [{ weight: 1, input: text(job.input ?? ''), answer: text(settings.expected_output ?? '') }];
  }
  const interactor = settings.interactor ? await buildHelper(settings.interactor, 'interactor', sandbox, deps) : null;
  const checkerHelper = !interactor && checker.type === 'program' ? await buildHelper(checker, 'checker', sandbox, deps) : null;
  const grader = groups?.grader ? await buildHelper(groups.grader, 'grader', sandbox, deps) : null;
  return {
    settings,
    tests,
    single: !settings.problem && !(job.tests && job.tests.length > 0),
    checker: checkerHelper,
    interactor,
    ...(problem ? { problem } : {}),
    ...(groups ? { groups } : {}),
    ...(outputBytes !== undefined ? { outputBytes } : {}),
    ...(grader ? { grader } : {}),
    limits,
    included,
    answers,
    sandbox,
    deps,
  };
}

/**
 * A checker or interactor that did not compile. Its compile stage ran (the request's
 * code, with its output), so the request ends with that stage's result and is billed as
 * a program that does not compile is, its verdict checker_error.
 */
export class HelperNotBuilt extends Error {
  constructor(
    readonly what: 'checker' | 'interactor' | 'grader',
    readonly built: Extract<Built, { ok: false }>,
  ) {
    super(`the ${what} did not compile:\n${buildErrorText(built)}`);
  }
}

/** Builds a checker or interactor (compiled once per sources and compiler on this runner). */
async function buildHelper(source: ProgramSource, what: 'checker' | 'interactor' | 'grader', sandbox: Sandbox, deps: ExecuteDeps): Promise<Helper> {
  const entry = compilerEntry(source.compiler, deps.recipesDir);
  if (!entry) throw new NotStarted(`compiler ${source.compiler} (of the ${what}) is not in the catalogue`);
  const rootfs = imageRootfs(deps.imagesDir, entry.image);
  if (!existsSync(rootfs)) throw new NotStarted(`image ${entry.image} (of the ${what}) is not installed`);
  const stored = { code: source.code, run_options: source.options };
  const key = keyOf(entry, rootfs, stored);
  const cached = deps.judge?.built.get(key);
  if (cached) return { entry, rootfs, run: cached, convention: source.convention, args: source.args ?? [] };
  const plan = planProgram(entry, stored);
  const built = await buildProgram(plan, (planned) => {
    if (deps.signal?.aborted) throw new NotStarted('the run was aborted');
    const spec: SandboxSpec = { rootfs, argv: planned.argv, files: planned.files, dirs: planned.dirs, stdin: '', slot: deps.slot, collect: planned.collect };
    if (entry.env) spec.env = entry.env;
    if (deps.signal) spec.signal = deps.signal;
    return sandbox.run(spec);
  });
  if (!built.ok) throw new HelperNotBuilt(what, built);
  deps.judge?.built.put(key, built.run);
  return { entry, rootfs, run: built.run, convention: source.convention, args: source.args ?? [] };
}

function keyOf(entry: CompilerEntry, rootfs: string, program: { code: string; run_options: ProgramSource['options'] }): string {
  let image = rootfs;
  try {
    image = realpathSync(rootfs);
  } catch {
    // the stage will say what is wrong with it
  }
  return BuiltCache.key([entry.id, entry.version, image, program.code, program.run_options.main ?? null, program.run_options.files ?? []]);
}

/** A checker's or interactor's stage: its built run with `args` after its command (then,
 *  for a Kattis validator, its own and the test's validator arguments, as Kattis passes
 *  them; a testlib checker would read them as its result file) and the test's files
 *  `given` (read-only) in its workspace, its feedback directory (Kattis). */
function helperSpec(j: Judging, h: Helper, args: string[], given: Record<string, Buffer>, t: JudgeTest, carried: Record<string, Buffer> = {}): SandboxSpec {
  const feedback = feedbackPaths(h.convention);
  const extra = h.convention === 'kattis' ? [...h.args, ...(t.validatorArgs ?? [])] : [];
  const spec: SandboxSpec = {
    rootfs: h.rootfs,
    argv: [...h.run.argv, ...args, ...extra],
    files: [
      ...h.run.files,
      ...Object.entries(given).map(([name, content]): StageFile => ({ name, mode: 0o444, content })),
      // A multi-pass test's feedback directory as the previous pass left it, for the validator to add to.
      ...Object.entries(carried).map(([name, content]): StageFile => ({ name: `${CHECK_FILES.feedbackDir}/${name}`, mode: 0o644, content })),
    ],
    dirs: [...h.run.dirs, ...feedback.dirs],
    slot: j.deps.slot,
  };
  if (feedback.collect.length > 0) spec.collect = feedback.collect;
  if (h.entry.env) spec.env = h.entry.env;
  if (j.deps.signal) spec.signal = j.deps.signal;
  return spec;
}

/** What a checker's or interactor's stage says of the output, by its convention. */
function helperVerdict(h: Helper, ended: SandboxOutcome, what: 'checker' | 'interactor'): CheckResult {
  if (ended.status === 'internal_error') throw new NotStarted(`the sandbox could not run the ${what}`, ended.diagnostic);
  return conventionVerdict(h.convention, { how: ended.status, exitCode: ended.exitCode, signal: ended.signal, stderr: ended.stderr, feedback: feedbackOf(ended.collected) }, what);
}

/** A checker program's verdict on one output: its stage, by its convention, and the feedback files it left. */
async function runChecker(j: Judging, h: Helper, t: JudgeTest, data: CheckData, carried?: Record<string, Buffer>): Promise<{ check: CheckResult; feedback: Record<string, Buffer> }> {
  const { args, outputOnStdin } = checkerArguments(h.convention);
  const spec = helperSpec(j, h, args, { [CHECK_FILES.input]: data.input, [CHECK_FILES.output]: data.output, [CHECK_FILES.answer]: data.answer }, t, carried);
  spec.stdin = outputOnStdin ? data.output : '';
  if (j.limits) spec.limits = j.limits;
  const ended = await j.sandbox.run(spec);
  return { check: helperVerdict(h, ended, 'checker'), feedback: feedbackOf(ended.collected) };
}

/**
 * An interactive test: the program and the interactor, each in a sandbox of the slot's
 * (lanes 0 and 1), started together and joined by their stdio; the interactor reads the
 * test's input (and answer) from its files. The program's time and memory are its own
 * and its limits the run's; the interactor's wall-clock limit is the run's plus
 * INTERACTOR_MARGIN_MS (time to give its verdict once the program has gone), its other
 * limits the service's. Either ending ends the other's stdin, so a partner that stops
 * early never leaves the other waiting. Which ended first is told by their end times
 * (each program's as its runbox-init reaped it, before its output closed: a partner
 * that ended on reading that end always ended later).
 */
async function interact(j: Judging, h: Helper, r: JudgeRun, t: JudgeTest, input: Buffer, answer: Buffer, carried?: Record<string, Buffer>): Promise<{ outcome: SandboxOutcome; judged: Judged; word: CheckResult; feedback: Record<string, Buffer> }> {
  const link = new StageLink();
  const spec = helperSpec(j, h, interactorArguments(h.convention), { [CHECK_FILES.input]: input, [CHECK_FILES.answer]: answer }, t, carried);
  spec.lane = 1;
  spec.link = link.side(1);
  spec.limits = { timeoutMs: interactorTimeoutMs(j.limits?.timeoutMs) };
  const [outcome, ended] = await Promise.all([r.run(Buffer.alloc(0), undefined, link.side(0)), j.sandbox.run(spec)]);
  const word = helperVerdict(h, ended, 'interactor');
  const status = executionFields(outcome).status as Parameters<typeof interactiveVerdict>[0];
  return { outcome, judged: interactiveVerdict(status, word, ended.endedAtNs < outcome.endedAtNs), word, feedback: feedbackOf(ended.collected) };
}

/**
 * A multi-pass test (src/judge/multi-pass.ts): each pass the program's run and its
 * validator's, or the program joined to the interactor; the test's fields are the last
 * pass's, with the number of passes.
 */
async function multiPassTest(j: Judging, r: JudgeRun, t: JudgeTest, input: Buffer, answer: Buffer, passes: number): Promise<{ outcome: SandboxOutcome; judged: Judged; passes: number }> {
  const done = await multiPass<{ outcome: SandboxOutcome; judged?: Judged }>(input, passes, async (pass, carried) => {
    if (j.interactor) {
      const { outcome, judged, word, feedback } = await interact(j, j.interactor, r, t, pass, answer, carried);
      // A pass the program lost (a limit, a crash: its status is the verdict) or the interactor failed ends the test.
      if (judged.verdict !== word.verdict || word.verdict === 'checker_error') return { ended: { outcome, judged } };
      return { run: { outcome }, check: word, feedback };
    }
    const outcome = await r.run(pass, { floodBytes: judgedFloodBytes(answer.length) });
    const status = executionFields(outcome).status as Parameters<typeof testVerdict>[0];
    if (status !== 'success') return { ended: { outcome, judged: testVerdict(status, null) } };
    const { check, feedback } = await runChecker(j, j.checker!, t, { input: pass, output: outcome.wholeStdout ?? outcome.stdout, answer }, carried);
    return { run: { outcome }, check, feedback };
  });
  const judged = done.last.judged ?? testVerdict('success', done.check);
  return { outcome: done.last.outcome, judged, passes: done.passes };
}

/** The most passes a test may take: a multi-pass problem's validation_passes; undefined for one pass. */
function passesOf(j: Judging): number | undefined {
  if (j.interactor) return j.settings.interactor?.passes;
  return j.checker && j.settings.checker.type === 'program' ? j.settings.checker.passes : undefined;
}

export interface JudgeRun {
  /** The submission's fields before the run's: id, compiler, extra_params, compile_output. */
  base: Pick<RunResult, 'id' | 'compiler' | 'extra_params' | 'compile_output'>;
  returnFiles: boolean;
  /** The program's run stage with this stdin (bytes, or a file on this host), its whole stdout kept; or joined to an interactor's stage. */
  run(input: Buffer | { file: string }, judged?: SandboxSpec['judged'], link?: SandboxSpec['link']): Promise<SandboxOutcome>;
}

/** What the checker (a program's stage, or a built-in comparison) says of one output. */
export async function checkOutput(j: Judging, t: JudgeTest, data: CheckData): Promise<CheckResult> {
  if (j.checker) return (await runChecker(j, j.checker, t, data)).check;
  const checker = j.settings.checker;
  if (checker.type === 'program') throw new Error('a checker program is built before its tests are judged');
  return compare(withTestFlags(checker, t), data);
}

/** The default validator's flags: the problem's, then the test's group's, as Kattis gives them. */
function withTestFlags(checker: BuiltinChecker, t: JudgeTest): BuiltinChecker {
  if ((checker.type !== 'kattis' && checker.type !== 'domjudge') || !t.validatorArgs?.length) return checker;
  return { type: checker.type, flags: [...(checker.flags ?? []), ...t.validatorArgs] };
}

const skippedTest = (name: string | undefined): TestResult => ({ ...(name !== undefined ? { name } : {}), ...notRun('skipped'), ...SKIPPED });

/** Runs and judges every test (each in a fresh sandbox), then the request's verdict and score. */
export async function judgeTests(j: Judging, r: JudgeRun): Promise<RunResult> {
  const results: TestResult[] = [];
  const outcomes: (SandboxOutcome | null)[] = [];
  const grading = new GroupGrading(j.groups, j.grader ? (input, flags) => runGrader(j, j.grader!, input, flags) : undefined);
  let stopped = false;
  for (const [i, t] of j.tests.entries()) {
    if (stopped || (await grading.skips(results, i))) {
      results.push(skippedTest(t.name));
      outcomes.push(null);
      continue;
    }
    const answer = await t.answer();
    const passes = passesOf(j);
    if (passes !== undefined) {
      const input = await t.input();
      const { outcome, judged, passes: ran } = await multiPassTest(j, r, t, input, answer, passes);
      results.push({ ...(t.name !== undefined ? { name: t.name } : {}), ...executionFields(outcome), ...judged, passes: ran, ...(r.returnFiles ? returnedFiles(outcome) : {}) });
      outcomes.push(outcome);
      if (j.settings.stop_on_failure && judged.verdict !== 'accepted') stopped = true;
      continue;
    }
    if (j.interactor) {
      const input = await t.input();
      const { outcome, judged } = await interact(j, j.interactor, r, t, input, answer);
      results.push({ ...(t.name !== undefined ? { name: t.name } : {}), ...executionFields(outcome), ...judged, ...(r.returnFiles ? returnedFiles(outcome) : {}) });
      outcomes.push(outcome);
      if (j.settings.stop_on_failure && judged.verdict !== 'accepted') stopped = true;
      continue;
    }
    // A stored test's input goes to the program as its cached file; its bytes are read
    // here only for a checker program, which is given them.
    const inputFile = t.inputFile ? await t.inputFile() : undefined;
    const input = inputFile === undefined || j.checker ? await t.input() : NO_BYTES;
    const outcome = await r.run(inputFile !== undefined ? { file: inputFile } : input, { floodBytes: judgedFloodBytes(answer.length, j.outputBytes) });
    const fields = executionFields(outcome);
    // A run stage's status is never compile_error, internal_error (NotStarted) or cancelled.
    const status = fields.status as Parameters<typeof testVerdict>[0];
    let judged: Judged;
    if (status !== 'success') judged = testVerdict(status, null);
    else {
      const data: CheckData = { input, output: outcome.wholeStdout ?? outcome.stdout, answer };
      judged = testVerdict('success', await checkOutput(j, t, data));
    }
    results.push({ ...(t.name !== undefined ? { name: t.name } : {}), ...fields, ...judged, ...(r.returnFiles ? returnedFiles(outcome) : {}) });
    outcomes.push(outcome);
    if (j.settings.stop_on_failure && judged.verdict !== 'accepted') stopped = true;
  }
  const overall = overallVerdict(results.map((res, i) => ({ verdict: res.verdict!, score: res.score!, checker_message: res.checker_message ?? null, weight: j.tests[i]!.weight })));
  // The fields outside tests are the first test's that was not accepted, or the last run's.
  let shown = results.findIndex((res) => res.verdict !== 'accepted' && res.verdict !== 'skipped');
  if (shown === -1) shown = outcomes.length - 1 - [...outcomes].reverse().findIndex((o) => o !== null);
  const { name: _name, verdict: _verdict, score: _score, checker_message, passes: _passes, files, files_truncated, files_dropped, ...execution } = results[shown]!;
  const outcome = outcomes[shown]!;
  return grading.finish({
    ...r.base,
    ...(execution as Omit<typeof execution, 'status'> & { status: Exclude<TestResult['status'], 'skipped'> }),
    verdict: overall.verdict,
    score: overall.score,
    checker_message: checker_message ?? null,
    stdout_truncated: outcome.stdoutTruncated,
    stderr_truncated: outcome.stderrTruncated,
    ...(j.problem ? { problem: j.problem } : {}),
    ...(r.returnFiles ? { files, files_truncated, files_dropped } : {}),
    ...(j.single ? {} : { tests: results }),
  } as RunResult);
}

/** A custom grader's answer for a group: its stage given the items' `VERDICT score` lines on stdin and the group's flags, as problemtools runs it. */
async function runGrader(j: Judging, h: Helper, input: string, flags: readonly string[]) {
  const spec: SandboxSpec = { rootfs: h.rootfs, argv: [...h.run.argv, ...flags], files: h.run.files, dirs: h.run.dirs, stdin: input, slot: j.deps.slot };
  if (j.limits) spec.limits = j.limits;
  if (h.entry.env) spec.env = h.entry.env;
  if (j.deps.signal) spec.signal = j.deps.signal;
  const ended = await j.sandbox.run(spec);
  if (ended.status === 'internal_error') throw new NotStarted('the sandbox could not run the grader', ended.diagnostic);
  return ended.status === 'exited' && ended.exitCode === 0 ? graderAnswer(ended.stdout.toString('utf8')) : { verdict: 'JE' as const, score: 0 };
}
