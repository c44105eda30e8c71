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

/**
 * A runbox verdict of a run that succeeded as Judge0's status: accepted 3; a wrong or
 * partly right output, or one right but laid out otherwise, Wrong Answer 4; a checker
 * that failed, Internal Error 13. (A run that did not succeed maps by its status.)
 */
export function judge0StatusOfVerdict(verdict: NonNullable<RunResult['verdict']>): number {
  switch (verdict) {
    case 'accepted':
      return 3;
    case 'wrong_answer':
    case 'presentation_error':
    case 'partial':
      return 4;
    case 'checker_error':
      return 13;
    case 'timeout':
      return 5;
    case 'compile_error':
      return 6;
    case 'output_limit':
      return 8;
    case 'runtime_error':
      return 11;
    case 'memory_limit':
    case 'process_limit':
      return 12;
    case 'internal_error':
    case 'cancelled':
      return 13;
  }
}

/** The status of an ended run, and Judge0's message for it (isolate's wording). */
export function judge0Verdict(result: RunResult, expectedOutput: string | null): { status: Judge0Status; message: string | null } {
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
      return { status: status(accepted ? 3 : 4), message: null };
    }
    case 'compile_error':
      return { status: status(6), message: null };
    case 'timeout':
      return { status: status(5), message: 'Time limit exceeded' };
    case 'runtime_error':
      if (result.signal !== null) return { status: status(bySignal(result.signal)), message: `Caught fatal signal ${result.signal}` };
      return { status: status(11), message: `Exited with error status ${result.exit_code ?? 1}` };
    case 'memory_limit':
      return { status: status(12), message: 'Memory limit exceeded' };
    case 'output_limit':
      return { status: status(8), message: 'Output limit exceeded' };
    case 'process_limit':
      return { status: status(12), message: 'Process limit exceeded' };
    case 'internal_error':
    case 'cancelled':
      return { status: status(13), message: result.error || 'internal error' };
  }
}

export function queuedStatus(running: boolean): Judge0Status {
  return status(running ? PROCESSING : IN_QUEUE);
}
