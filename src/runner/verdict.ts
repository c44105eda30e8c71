import { RUN_LIMITS } from '../limits.js';
import type { Execution, RunResult } from '../result.js';
import type { SandboxOutcome, SandboxSpec } from '../sandbox/spec.js';
import { outputText } from '../util/output-text.js';

/** The job could not be run (unknown compiler, image missing, sandbox failure, aborted): not billed. */
export class NotStarted extends Error {
  constructor(
    message: string,
    readonly diagnostic?: string,
  ) {
    super(message);
  }
}

/**
 * One sandbox outcome as the fields of a result. Forced stops come from the sandbox's
 * own verdicts, never from the exit code: a program that exits 137 by itself is a
 * runtime_error.
 */
export function executionFields(outcome: SandboxOutcome): Execution {
  let status: Execution['status'];
  switch (outcome.status) {
    case 'exited':
      status = outcome.exitCode === 0 ? 'success' : 'runtime_error';
      break;
    case 'signaled':
      status = 'runtime_error';
      break;
    case 'timeout':
    case 'memory_limit':
    case 'output_limit':
    case 'process_limit':
      status = outcome.status;
      break;
    case 'internal_error':
      throw new NotStarted('the sandbox could not run the program', outcome.diagnostic);
  }
  return {
    status,
    output: outputText(outcome.stdout, outcome.stdoutTruncated),
    error: outputText(outcome.stderr, outcome.stderrTruncated),
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    time: outcome.cpuMs === null ? null : seconds(outcome.cpuMs),
    total: seconds(outcome.wallMs),
    memory: outcome.memoryPeakBytes === null ? null : Math.round(outcome.memoryPeakBytes / 1024),
    limit_exceeded: status === 'timeout' ? (outcome.limitExceeded ?? 'wall') : null,
    truncated: outcome.stdoutTruncated || outcome.stderrTruncated,
  };
}

/** A run stage's limits as a result shows them (its own where the request lowered them). */
export function resultLimits(limits: SandboxSpec['limits']): NonNullable<RunResult['limits']> {
  const l = { ...RUN_LIMITS, ...limits };
  return { time: seconds(l.cpuTimeMs), wall_time: seconds(l.timeoutMs), memory: Math.round(l.memoryBytes / 1024) };
}

/** Milliseconds as seconds to the microsecond: 0.043117, not 0.043117000000000004. */
function seconds(ms: number): number {
  return Math.round(ms * 1000) / 1e6;
}
