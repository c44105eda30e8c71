import type { ServerResponse } from 'node:http';
import { keyAsker } from '../problems/feedback.js';
import type { TSchema } from 'typebox';
import { ApiError } from '../api/errors.js';
import { storedResult, waitForRunEnd } from '../api/live.js';
import { judgedProgram, requestJudging, requestProgram, type AdmitRun, type RunCaller } from '../api/middleware/admission.js';
import { validate } from '../api/middleware/json-body.js';
import type { ApiDeps } from '../api/route.js';
import { compilerList } from '../api/routes/compilers.js';
import { lookupSubmission } from '../api/submission-view.js';
import type { RunResult } from '../result.js';
import { expiredMessage } from '../retention/expired.js';
import { judgedContent, runContent, type Content } from './result-content.js';
import { GetSubmissionInput, JudgeInput, NoInput, RunCodeInput } from './schemas.js';
import { SESSION_TOOLS } from './session-tools.js';

// The MCP tools: each a name, a description written for a model, an input schema from
// the REST API's TypeBox schemas, and a call on the same domain modules as the REST
// routes (admission, the run-end wait, the catalogue, the judge, submissions). A
// refusal is runbox's ApiError, which the server turns into a tool error.

/** Who calls and what a call needs: the account's key, admission, and the HTTP answer a run's wait watches. */
export interface ToolCall {
  deps: ApiDeps;
  auth: RunCaller;
  admit: AdmitRun;
  /** The caller going away stops its run, as for POST /api/v2/run-code-sync/. */
  res: ServerResponse;
  /** The compilers the deployment's live runners can run now (src/compilers/deployment.ts). */
  available(): Promise<ReadonlySet<string>>;
  /** Throws 503 maintenance while the operator has switched it on (runs only, as the REST run routes). */
  assertNotInMaintenance(): Promise<void>;
}

export interface Tool {
  name: string;
  title: string;
  description: string;
  input: TSchema;
  call(call: ToolCall, args: unknown): Promise<Content[]>;
}

/** Admits the program as a synchronous run and waits for its result, as POST /api/v2/run-code-sync/ does. */
async function runToEnd(call: ToolCall, body: RunCodeInput | JudgeInput, judged: boolean): Promise<RunResult> {
  const { deps, auth } = call;
  await call.assertNotInMaintenance();
  const live = deps.live;
  if (!live) throw new ApiError(500, 'internal_error', 'synchronous runs are not available on this API process');
  const program = requestProgram(body, body.compiler, deps.config.RUNBOX_RECIPES_DIR);
  const judging = await requestJudging(deps, auth.accountId, body);
  if (judged && !judging.judge) throw new ApiError(400, 'invalid_request', 'give tests with an expected_output each, or a stored problem (with its id)');
  const { id, admittedAt } = await call.admit(auth, { compiler: body.compiler, ...judgedProgram(program, judging, body), extraParams: null }, 'sync');
  if (!(await waitForRunEnd(call.res, live, id, deps.db, deps.log, admittedAt))) throw new ApiError(499, 'cancelled', 'the caller went away; the run was stopped');
  return storedResult(deps.db, id, keyAsker(auth), live);
}

const runCode: Tool = {
  name: 'run_code',
  title: 'Run code',
  description: [
    'Runs a program in a sandbox and returns its result: status (success, compile_error, runtime_error, timeout, memory_limit, output_limit…),',
    'what it printed on standard output and standard error, its exit code, CPU time and peak memory.',
    'Give compiler (an id from list_compilers, such as python-3.9.7) and code, or files for a program of several files;',
    'input is its standard input, args its command-line arguments, limits lower time and memory limits.',
    'With return_files true, the files the program writes under /box/out/ come back: PNG, JPEG and GIF files as images',
    '(a plot saved to /box/out/plot.png is shown), the others listed. Every run counts against the account\'s quota.',
  ].join(' '),
  input: RunCodeInput,
  call: async (call, args) => runContent(await runToEnd(call, validate<RunCodeInput>(RunCodeInput, args), false)),
};

const judge: Tool = {
  name: 'judge',
  title: 'Judge a program',
  description: [
    'Runs a program against tests and judges its output: each test\'s verdict (accepted, wrong_answer, presentation_error, timeout,',
    'runtime_error…) with its time and memory, what a failing test printed, and the overall verdict (the first test not accepted)',
    'and score (0 to 1, by the tests\' weights). Give compiler and code (or files), and either tests — [{"input", "expected_output"}, …] —',
    'or problem, the id of a stored problem of the account (see the runbox://problems resource). checker chooses how outputs compare',
    '(default: tokens, white space ignored); stop_on_failure ends at the first failing test. Each test counts as one run.',
  ].join(' '),
  input: JudgeInput,
  call: async (call, args) => judgedContent(await runToEnd(call, validate<JudgeInput>(JudgeInput, args), true)),
};

const listCompilers: Tool = {
  name: 'list_compilers',
  title: 'List compilers',
  description:
    'Lists the compilers and interpreters installed on this service: each id (what run_code and judge take as compiler), its language and version, and the libraries a program can import with no install step (numpy, Boost…).',
  input: NoInput,
  call: async ({ deps }, args) => {
    validate(NoInput, args ?? {});
    const installed = (await compilerList(deps.db, deps.config)).filter((c) => c.available);
    const lines = installed.map((c) => {
      const libraries = Object.entries(c.libraries).map(([name, version]) => `${name} ${version}`);
      return `${c.id}: ${c.language ?? '?'} ${c.version ?? ''}${libraries.length > 0 ? `; libraries: ${libraries.join(', ')}` : ''}`;
    });
    return [{ type: 'text', text: lines.length > 0 ? lines.join('\n') : 'no compiler is installed on this service' }];
  },
};

const getSubmission: Tool = {
  name: 'get_submission',
  title: 'Get a submission',
  description:
    "Looks up a submission of the caller's account by its id (the submission line of a run_code or judge result): its state (queued, running, finished, failed), its times and, once it has ended, its full result as JSON.",
  input: GetSubmissionInput,
  call: async ({ deps, auth }, args) => {
    const { id } = validate<{ id: string }>(GetSubmissionInput, args);
    const found = await lookupSubmission(deps.db, keyAsker(auth), id);
    // Another account's is not found, as over REST, so ids cannot be probed.
    if (found === undefined) throw new ApiError(404, 'not_found', `no submission ${id}`);
    if ('expired' in found) throw new ApiError(410, 'submission_expired', expiredMessage(found.expired, deps.config.RUNBOX_RETENTION_DAYS));
    return [{ type: 'text', text: found.json }];
  },
};

export const TOOLS: Tool[] = [runCode, judge, listCompilers, getSubmission, ...SESSION_TOOLS];
