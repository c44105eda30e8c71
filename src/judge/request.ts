import type { StageLimits, TestCaseRow } from '../db/schema.js';
import { runLimits, ProgramError } from '../program/program.js';
import type { ProblemForRun } from '../problems/store.js';
import { checkerSetting, JudgeSettingsError, programSource, settingCompilers, type CheckerRequest, type InteractorRequest, type JudgeSettings } from './settings.js';

// The judging fields of a run request (REST body; the WebSocket run message takes
// expected_output and checker), checked and turned into what a submission keeps: its
// tests with their expected outputs and weights, and run_options.judge. A request is
// judged when a test has an expected output, or it names a checker program, an
// interactor or a stored problem; then every test gets a verdict.

export interface JudgingRequest {
  input?: string | undefined;
  expected_output?: string | undefined;
  tests?: { input: string; expected_output?: string | undefined; weight?: number | undefined; name?: string | undefined }[] | undefined;
  checker?: CheckerRequest | undefined;
  interactor?: InteractorRequest | undefined;
  stop_on_failure?: boolean | undefined;
  problem?: string | undefined;
}

/** A judging rule broken (400), or a problem that is not the account's (404). */
export class JudgingError extends Error {
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

export interface Judging {
  input: string | null;
  tests: TestCaseRow[] | null;
  /** run_options.judge; null: not judged. */
  judge: JudgeSettings | null;
  /** A stored problem's: the submissions billed (its tests) and its run limits. */
  units?: number;
  run?: StageLimits;
  /** Compilers of its checker and interactor, which must be offered. */
  compilers: string[];
}

const bad = (message: string) => new JudgingError(400, message);

/**
 * Reads the judging fields. `problem` looks up the account's stored problem by id
 * (undefined: none of that id for this account).
 */
export async function readJudging(req: JudgingRequest, problem: (id: string) => Promise<ProblemForRun | undefined>): Promise<Judging> {
  if (req.problem !== undefined) {
    for (const field of ['input', 'tests', 'expected_output', 'checker', 'interactor'] as const) {
      if (req[field] !== undefined) throw bad(`give either problem or ${field}: a problem brings its own tests, checker and interactor`);
    }
    const p = await problem(req.problem);
    if (!p) throw new JudgingError(404, `no problem ${req.problem}`);
    let run: StageLimits;
    try {
      run = runLimits(p.limits);
    } catch (err) {
      // Stored limits were checked when the problem was stored; the service's may have been lowered since.
      if (err instanceof ProgramError) throw bad(`problem ${p.id}: ${err.message}`);
      throw err;
    }
    return {
      input: null,
      tests: null,
      judge: { checker: p.checker, interactor: p.interactor, stop_on_failure: req.stop_on_failure ?? false, problem: { id: p.id, version: p.version } },
      units: p.tests,
      ...(Object.keys(run).length > 0 ? { run } : {}),
      compilers: settingCompilers(p),
    };
  }
  if (req.input !== undefined && req.tests !== undefined) throw bad('give either input or tests, not both');
  if (req.expected_output !== undefined && req.tests !== undefined) throw bad('expected_output goes with input; with tests, each test has its own');
  const answered = req.expected_output !== undefined || (req.tests ?? []).some((t) => t.expected_output !== undefined);
  const program = req.checker?.type === 'program' || req.interactor !== undefined;
  const judged = answered || program;
  if (!judged) {
    if (req.checker !== undefined) throw bad('checker compares the output with expected_output: give it (with input, or in each test)');
    if (req.stop_on_failure !== undefined) throw bad('stop_on_failure needs verdicts: give expected_output (with input, or in each test), a checker program, an interactor or a problem');
    const weighted = (req.tests ?? []).findIndex((t) => t.weight !== undefined || t.name !== undefined);
    if (weighted !== -1) throw bad(`tests.${weighted}: weight and name go with verdicts: give expected_output, a checker program, an interactor or a problem`);
    return { input: req.tests ? null : (req.input ?? null), tests: req.tests ? req.tests.map((t) => ({ input: t.input })) : null, judge: null, compilers: [] };
  }
  // A built-in comparison needs an answer for every test; a checker program or an
  // interactor may do without (it gets an empty answer file).
  if (!program && req.tests) {
    const missing = req.tests.findIndex((t) => t.expected_output === undefined);
    if (missing !== -1) throw bad(`tests.${missing}: expected_output is missing (the other tests have one, and the comparison needs it)`);
  }
  let judge: JudgeSettings;
  try {
    judge = {
      checker: checkerSetting(req.checker),
      interactor: req.interactor ? programSource(req.interactor, 'interactor') : null,
      stop_on_failure: req.stop_on_failure ?? false,
    };
  } catch (err) {
    if (err instanceof JudgeSettingsError) throw bad(err.message);
    throw err;
  }
  if (req.tests) {
    const names = new Set<string>();
    req.tests.forEach((t, i) => {
      if (t.name === undefined) return;
      if (names.has(t.name)) throw bad(`tests.${i}.name ${JSON.stringify(t.name)} is given twice`);
      names.add(t.name);
    });
    return {
      input: null,
      tests: req.tests.map((t) => ({
        input: t.input,
        ...(t.expected_output !== undefined ? { expected_output: t.expected_output } : {}),
        ...(t.weight !== undefined ? { weight: t.weight } : {}),
        ...(t.name !== undefined ? { name: t.name } : {}),
      })),
      judge,
      compilers: settingCompilers(judge),
    };
  }
  return { input: req.input ?? null, tests: null, judge: { ...judge, expected_output: req.expected_output ?? '' }, compilers: settingCompilers(judge) };
}
