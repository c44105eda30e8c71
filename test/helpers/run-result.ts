import type { RunResult } from '../../src/result.js';

/** A successful Python run's result, as a runner would record it; `more` overrides any field. */
export function successResult(id: string, more: Partial<RunResult> = {}): RunResult {
  return {
    id,
    compiler: 'python-3.9.7',
    status: 'success',
    output: 'ok\n',
    error: '',
    exit_code: 0,
    signal: null,
    time: 0.01,
    total: 0.02,
    memory: 1000,
    limit_exceeded: null,
    truncated: false,
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    extra_params: null,
    ...more,
  };
}
