import type { Db } from '../db/connect.js';
import { notRun, RESULT_FIELD_ORDER, type RunResult, type TestResult } from '../result.js';

// How much of a stored problem's run its asker sees: the one filter every exit of a
// result applies (submission lookups, synchronous answers, callbacks, WebSocket
// messages, the compatible routes, MCP tools, the portal's pages). A problem's
// `feedback` applies to restricted askers (widget keys and student keys of its account)
// and to every key of another account (a public problem); its account's other keys and
// its owner's portal session see everything. Under every setting but `full` nothing a
// hidden test's data could pass through leaves the server: not its output or error
// (a program can print its input), its checker's message (it may quote the answer), its
// files, nor its exit code, signal, times and memory (a program can spell its input out
// in them). The fields outside `tests` are one test's (src/runner/judge.ts): they are
// withheld unless that test may be shown.

export const FEEDBACK_SETTINGS = ['full', 'samples', 'first_failure', 'verdict'] as const;
export type Feedback = (typeof FEEDBACK_SETTINGS)[number];

/** Who a result leaves the server for. */
export interface Asker {
  accountId: string;
  /** A widget key or a student key: its account's problems' runs reach it under their feedback. */
  restricted: boolean;
}

/** The asker a key is (an API key marked student, or a widget key, is restricted). */
export const keyAsker = (k: { accountId: string; kind: string; student?: boolean }): Asker => ({ accountId: k.accountId, restricted: k.kind === 'widget' || k.student === true });

/** The account's owner (its portal session, its unmarked API keys): everything of its own problems. */
export const ownerAsker = (accountId: string): Asker => ({ accountId, restricted: false });

/** What an asker may see of a problem version's runs: everything, or `feedback` with which tests (by ordinal) are samples. */
export type Shown = { feedback: 'full' } | { feedback: Exclude<Feedback, 'full'>; samples: boolean[] };

/** What `asker` may see of runs of this problem version (a problem gone, or its version swept, shows as no samples). */
export async function shownTo(db: Db, asker: Asker, problem: { id: string; version: number }): Promise<Shown> {
  const row = await db.selectFrom('problems').select(['account_id', 'feedback']).where('id', '=', problem.id).executeTakeFirst();
  // A problem that is not there any more: nothing but its verdict.
  if (!row) return { feedback: 'verdict', samples: [] };
  if (row.feedback === 'full' || (row.account_id === asker.accountId && !asker.restricted)) return { feedback: 'full' };
  const tests = await db.selectFrom('problem_tests').select(['ordinal', 'sample']).where('problem_id', '=', problem.id).where('version', '=', problem.version).execute();
  const samples: boolean[] = [];
  for (const t of tests) samples[t.ordinal] = t.sample;
  return { feedback: row.feedback, samples };
}

/** The result as `asker` may see it: unchanged unless it is a stored problem's run under a feedback that withholds. */
export async function resultFor(db: Db, asker: Asker, result: RunResult): Promise<RunResult> {
  if (!result.problem) return result;
  return withheld(result, await shownTo(db, asker, result.problem));
}

/** A test's data withheld: its name, status, verdict and score; none of what the program made of its input. */
function verdictOnly(t: TestResult): TestResult {
  return {
    ...(t.name !== undefined ? { name: t.name } : {}),
    ...notRun(t.status),
    ...(t.verdict !== undefined ? { verdict: t.verdict } : {}),
    ...(t.score !== undefined ? { score: t.score } : {}),
    ...(t.points !== undefined ? { points: t.points } : {}),
    checker_message: null,
  };
}

/** The statuses of a result no test ran for (a compile error's messages are the program's own). */
const NO_TEST_RAN = new Set(['compile_error', 'internal_error', 'cancelled']);

/** Which test the fields outside `tests` are (src/runner/judge.ts): the first not accepted, else the last run. */
function shownIndex(tests: readonly TestResult[]): number {
  const failed = tests.findIndex((t) => t.verdict !== 'accepted' && t.verdict !== 'skipped');
  if (failed !== -1) return failed;
  for (let i = tests.length - 1; i >= 0; i--) if (tests[i]!.status !== 'skipped') return i;
  return -1;
}

/** A group's name, verdict, score and its tests' names pass through; its message (a checker's or grader's words) does not. */
function groupsView(groups: unknown): unknown {
  if (!Array.isArray(groups)) return undefined;
  return groups.map((g: Record<string, unknown>) => Object.fromEntries(['name', 'verdict', 'score', 'max_score', 'tests'].filter((k) => k in g).map((k) => [k, g[k]])));
}

/** The pure part of the filter: the result under `shown` (a new object; fields outside the known ones are left out). */
export function withheld(result: RunResult, shown: Shown): RunResult {
  if (shown.feedback === 'full') return result;
  const sample = (i: number) => shown.feedback === 'samples' && shown.samples[i] === true;
  const tests = result.tests;
  const topIsSample = NO_TEST_RAN.has(result.status) || (tests ? sample(shownIndex(tests)) : sample(0));
  const source = result as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of RESULT_FIELD_ORDER) if (source[key] !== undefined) out[key] = source[key];
  if (!topIsSample) {
    Object.assign(out, notRun(result.status), { checker_message: null, stdout_truncated: false, stderr_truncated: false });
    delete out['files'];
    delete out['files_truncated'];
    delete out['files_dropped'];
  }
  if (tests) {
    if (shown.feedback === 'samples') out['tests'] = tests.map((t, i) => (sample(i) ? t : verdictOnly(t)));
    else if (shown.feedback === 'first_failure') {
      const first = tests.find((t) => t.verdict !== undefined && t.verdict !== 'accepted' && t.verdict !== 'skipped');
      out['tests'] = first ? [verdictOnly(first)] : [];
    } else delete out['tests'];
  }
  // Groups are copied above with the other fields: only their verdicts pass, and under `verdict` none.
  delete out['groups'];
  if (shown.feedback !== 'verdict' && source['groups'] !== undefined) out['groups'] = groupsView(source['groups']);
  return out as unknown as RunResult;
}
