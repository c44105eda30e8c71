import Type from 'typebox';
import type { RunResult } from '../../result.js';

// Jobe's RunResult (restapi.pdf section 4; app/Libraries/ResultObject.php) from a runbox
// result, with Jobe's outcome codes (LanguageTask's constants, and 30 for an output
// limit as Moodle's CodeRunner reads it).

export const JOBE_OUTCOMES = {
  compilationError: 11,
  runtimeError: 12,
  timeLimit: 13,
  success: 15,
  memoryLimit: 17,
  illegalSyscall: 19,
  internalError: 20,
  serverOverload: 21,
  outputLimit: 30,
} as const;

export const JobeRunResult = Type.Object(
  {
    run_id: Type.Union([Type.String(), Type.Null()]),
    outcome: Type.Integer({ description: '11 compilation error, 12 runtime error, 13 time limit, 15 success, 17 memory limit, 19 illegal system call, 20 internal error, 21 server overload, 30 output limit.' }),
    cmpinfo: Type.String(),
    stdout: Type.String(),
    stderr: Type.String(),
  },
  { description: "Jobe's run result." },
);

export interface JobeResult {
  run_id: string | null;
  outcome: number;
  cmpinfo: string;
  stdout: string;
  stderr: string;
}

const SIGSYS = 31;

/** Jobe's outcome for a runbox result. As Jobe's diagnoseResult, a run that wrote on stderr is a runtime error. */
export function jobeOutcome(r: Pick<RunResult, 'status' | 'signal' | 'error'>): number {
  switch (r.status) {
    case 'compile_error':
      return JOBE_OUTCOMES.compilationError;
    case 'success':
      return r.error.length > 0 ? JOBE_OUTCOMES.runtimeError : JOBE_OUTCOMES.success;
    case 'runtime_error':
    case 'process_limit':
      return r.signal === SIGSYS ? JOBE_OUTCOMES.illegalSyscall : JOBE_OUTCOMES.runtimeError;
    case 'timeout':
      return JOBE_OUTCOMES.timeLimit;
    case 'memory_limit':
      return JOBE_OUTCOMES.memoryLimit;
    case 'output_limit':
      return JOBE_OUTCOMES.outputLimit;
    default:
      return JOBE_OUTCOMES.internalError;
  }
}

export function jobeResult(r: RunResult): JobeResult {
  const outcome = jobeOutcome(r);
  if (outcome === JOBE_OUTCOMES.compilationError) {
    // runbox gives the compiler's messages in error; Jobe's cmpinfo is never empty on 11.
    return { run_id: r.id, outcome, cmpinfo: r.error || r.compile_output || 'compilation failed', stdout: '', stderr: '' };
  }
  return { run_id: r.id, outcome, cmpinfo: '', stdout: r.output, stderr: r.error };
}

/** A result for a run refused before it ran (an option the compiler does not take; no free slot). */
export const notRunResult = (outcome: number, cmpinfo = ''): JobeResult => ({ run_id: null, outcome, cmpinfo, stdout: '', stderr: '' });
