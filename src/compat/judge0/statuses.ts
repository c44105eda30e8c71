import type { ResultVerdict } from '../../judge/verdict.js';
import type { RunResult } from '../../result.js';

// Judge0 CE's statuses (app/enumerations/status.rb, 1.13), and how a runbox result maps
// onto them: Judge0 judges a run against expected_output, and names runtime errors by
// the signal that ended the program.

export const JUDGE0_STATUSES = [
  { id: 1, description: 'In Queue' },
  { id: 2, description: 'Processing' },
  { id: 3, description: 'Accepted' },
  { id: 4, description: 'Wrong Answer' },
  { id: 5, description: 'Time Limit Exceeded' },
  { id: 6, description: 'Compilation Error' },
  { id: 7, description: 'Runtime Error (SIGSEGV)' },
  { id: 8, description: 'Runtime Error (SIGXFSZ)' },
  { id: 9, description: 'Runtime Error (SIGFPE)' },
  { id: 10, description: 'Runtime Error (SIGABRT)' },
  { id: 11, description: 'Runtime Error (NZEC)' },
  { id: 12, description: 'Runtime Error (Other)' },
  { id: 13, description: 'Internal Error' },
  { id: 14, description: 'Exec Format Error' },
] as const;

export type Judge0Status = { id: number; description: string };

const status = (id: number): Judge0Status => ({ ...JUDGE0_STATUSES[id - 1]! });

export const IN_QUEUE = 1;
export const PROCESSING = 2;

/** Judge0's comparison: trailing whitespace of each line and trailing lines do not count. */
export function judge0Strip(text: string | null): string | null {
  if (text === null) return null;
  return text
    .split('\n')
    .map((l) => l.replace(/\s+$/, ''))
    .join('\n')
    .replace(/\s+$/, '');
}

/** Status.find_runtime_error_by_status_code: the signal that ended the program. */
function bySignal(signal: number): number {
  switch (signal) {
    case 11:
      return 7;
    case 25:
      return 8;
    case 8:
      return 9;
    case 6:
      return 10;
    default:
      return 12;
  }
}

/** How one runbox verdict (a test's or a request's `verdict`, or an unjudged run's
 *  `status`) is named by the judges runbox's conventions come from. */
export interface VerdictNames {
  verdict: ResultVerdict | 'skipped' | 'success';
  /** Kattis (problemtools): AC, WA, TLE, RTE, JE; CE for a program that does not compile. */
  kattis: string;
  /** DOMjudge's judgement results. */
  domjudge: string;
  /** What a testlib checker said (its exit code); — where no checker runs. */
  testlib: string;
  /** Judge0's status id (JUDGE0_STATUSES); null where Judge0 has none. */
  judge0: number | null;
  /** A word on the mapping, when it needs one. */
  note?: string;
}

/** Every runbox verdict as Kattis, DOMjudge, testlib and Judge0 name it: the Judge0 route's
 *  statuses come from here, and docs/api.md shows it (generated, src/docs/verdicts-table.ts). */
export const VERDICT_NAMES: readonly VerdictNames[] = [
  { verdict: 'accepted', kattis: 'AC', domjudge: 'correct', testlib: 'ok (0)', judge0: 3 },
  { verdict: 'success', kattis: 'AC', domjudge: 'correct', testlib: '—', judge0: 3, note: 'a run that is not judged: exit code 0; with Judge0\'s expected_output, compared as Judge0 compares' },
  { verdict: 'wrong_answer', kattis: 'WA', domjudge: 'wrong-answer (no-output when the program wrote nothing)', testlib: 'wa (1)', judge0: 4 },
  { verdict: 'presentation_error', kattis: 'WA', domjudge: 'wrong-answer', testlib: 'pe (2)', judge0: 4, note: 'the right answer laid out otherwise' },
  { verdict: 'partial', kattis: 'AC with its score (scoring problems), else WA', domjudge: 'wrong-answer', testlib: 'points (7)', judge0: 4, note: 'a score strictly between 0 and 1' },
  { verdict: 'timeout', kattis: 'TLE', domjudge: 'timelimit', testlib: '—', judge0: 5, note: 'past the CPU time or the wall-clock limit (limit_exceeded: cpu or wall)' },
  { verdict: 'memory_limit', kattis: 'RTE', domjudge: 'run-error', testlib: '—', judge0: 12 },
  { verdict: 'runtime_error', kattis: 'RTE', domjudge: 'run-error', testlib: '—', judge0: 11, note: 'Judge0 names it by the signal that ended the program: 7 SIGSEGV, 8 SIGXFSZ, 9 SIGFPE, 10 SIGABRT, 12 any other; 11 (NZEC) for a non-zero exit code' },
  { verdict: 'output_limit', kattis: 'RTE', domjudge: 'output-limit', testlib: '—', judge0: 8, note: 'runbox reports it as signal 25 (SIGXFSZ), as Judge0 does' },
  { verdict: 'process_limit', kattis: 'RTE', domjudge: 'run-error', testlib: '—', judge0: 12 },
  { verdict: 'checker_error', kattis: 'JE', domjudge: 'an internal error of the judgehost', testlib: 'fail (3)', judge0: 13, note: 'the checker or interactor failed, not the program' },
  { verdict: 'compile_error', kattis: 'CE', domjudge: 'compiler-error', testlib: '—', judge0: 6 },
  { verdict: 'internal_error', kattis: 'JE', domjudge: 'an internal error of the judgehost', testlib: '—', judge0: 13 },
  { verdict: 'cancelled', kattis: '—', domjudge: '—', testlib: '—', judge0: 13, note: 'the caller of a synchronous or WebSocket run went away' },
  { verdict: 'skipped', kattis: '— (not run after the first failure)', domjudge: '— (not run: lazy judging)', testlib: '—', judge0: null, note: 'a test after the first failure with stop_on_failure' },
];

const judge0Ids = new Map(VERDICT_NAMES.map((v) => [v.verdict, v.judge0]));

/** The Judge0 status id of a runbox verdict or status (VERDICT_NAMES; runtime_error: without its signal). */
export function judge0StatusOfVerdict(verdict: NonNullable<RunResult['verdict']> | RunResult['status']): number {
  return judge0Ids.get(verdict) ?? 13;
}

/** The status of an ended run, and Judge0's message for it (isolate's wording). */
export function judge0Verdict(result: RunResult, expectedOutput: string | null): { status: Judge0Status; message: string | null } {
  const named = status(judge0StatusOfVerdict(result.status));
  switch (result.status) {
    case 'success': {
      // A judged run (its expected_output compared over the whole output) carries its
      // verdict; a result stored before that is compared here, on the output it kept.
      if (result.verdict !== undefined) {
        const id = judge0StatusOfVerdict(result.verdict);
        return { status: status(id), message: id === 13 ? (result.checker_message ?? 'internal error') : null };
      }
      // No output and an empty expected output agree (Judge0 would compare nil with "").
      const accepted = expectedOutput === null || judge0Strip(expectedOutput) === judge0Strip(result.output);
      return { status: status(judge0StatusOfVerdict(accepted ? 'accepted' : 'wrong_answer')), message: null };
    }
    case 'compile_error':
      return { status: named, message: null };
    case 'timeout':
      return { status: named, message: result.limit_exceeded === 'wall' ? 'Time limit exceeded (wall clock)' : 'Time limit exceeded' };
    case 'runtime_error':
      if (result.signal !== null) return { status: status(bySignal(result.signal)), message: `Caught fatal signal ${result.signal}` };
      return { status: named, message: `Exited with error status ${result.exit_code ?? 1}` };
    case 'memory_limit':
      return { status: named, message: 'Memory limit exceeded' };
    case 'output_limit':
      return { status: named, message: 'Output limit exceeded' };
    case 'process_limit':
      return { status: named, message: 'Process limit exceeded' };
    case 'internal_error':
    case 'cancelled':
      return { status: named, message: result.error || 'internal error' };
  }
}

export function queuedStatus(running: boolean): Judge0Status {
  return status(running ? PROCESSING : IN_QUEUE);
}
