import type { RunResult } from '../result.js';
import type { Expectation, VerdictCode } from './example-submissions.js';

// What a verification finds of one example submission: the verdict runbox gave it (as the
// format names verdicts), its time (its slowest test, CPU seconds) and how it differs from
// what the package expects (src/problems/example-submissions.ts), as problemtools'
// verifyproblem reports it. Pure: the runs are ordinary judged submissions
// (src/api/problem-checks.ts admits them and reads their results).

/** A test's verdict as the format names it; null: not run. */
export function verdictCode(verdict: string | undefined): VerdictCode | null {
  switch (verdict) {
    case 'accepted':
      return 'AC';
    case 'wrong_answer':
    case 'presentation_error':
    case 'partial':
      return 'WA';
    case 'timeout':
      return 'TLE';
    case 'runtime_error':
    case 'memory_limit':
    case 'output_limit':
    case 'process_limit':
      return 'RTE';
    case 'checker_error':
      return 'JE';
    case 'compile_error':
      return 'CE';
    default:
      return null;
  }
}

export interface Finding {
  /** runbox's verdict of the run. */
  verdict: string | null;
  /** The format's: the first test not accepted, else AC (CE when it did not compile). */
  code: VerdictCode | null;
  /** CPU seconds of its slowest test; null when no test ran. */
  time: number | null;
  score: number | null;
  mismatches: string[];
}

type JudgedRun = Pick<RunResult, 'verdict' | 'score' | 'status'> & { tests?: { name?: string; verdict?: string; time: number | null }[] };

/** How a judged run meets its expectation. */
export function findingOf(expected: Expectation, run: JudgedRun): Finding {
  const tests = (run.tests ?? []).map((t) => ({ name: t.name ?? '?', code: verdictCode(t.verdict), time: t.time })).filter((t) => t.code !== null);
  const times = tests.map((t) => t.time).filter((t): t is number => t !== null);
  const time = times.length > 0 ? Math.max(...times) : null;
  const verdict = run.verdict ?? null;
  const compiled = verdict !== 'compile_error';
  const code: VerdictCode | null = !compiled ? 'CE' : (tests.find((t) => t.code !== 'AC')?.code ?? (tests.length > 0 ? 'AC' : verdictCode(verdict ?? undefined)));
  const mismatches: string[] = [];
  if (verdict === 'internal_error' || verdict === 'cancelled' || (verdict === null && run.status === 'internal_error')) {
    return { verdict: verdict ?? run.status, code: null, time, score: run.score ?? null, mismatches: ['the run could not be completed'] };
  }
  const judgeError = tests.find((t) => t.code === 'JE');
  if (judgeError) mismatches.push(`the output validator failed on ${judgeError.name}`);
  const list = (codes: readonly string[]) => codes.join(', ');
  if (expected.final && code !== null && !expected.final.includes(code)) mismatches.push(`got ${code}, expected ${list(expected.final)}`);
  for (const permitted of expected.permitted) {
    if (!compiled) {
      mismatches.push(`did not compile (permitted: ${list(permitted)})`);
      continue;
    }
    const off = tests.find((t) => !permitted.includes(t.code!));
    if (off) mismatches.push(`${off.name} got ${off.code}, permitted: ${list(permitted)}`);
  }
  for (const required of expected.required) {
    if (!compiled && !required.includes('CE')) mismatches.push(`did not compile (required: ${list(required)})`);
    else if (compiled && !tests.some((t) => required.includes(t.code!))) mismatches.push(`no test got ${list(required)} (required)`);
  }
  if (expected.partial) {
    const s = run.score ?? 0;
    if (!(s > 0 && s < 1)) mismatches.push(`scored ${s}, expected a partial score (between 0 and 1)`);
  }
  return { verdict, code, time, score: run.score ?? null, mismatches: [...new Set(mismatches)] };
}
