import Type from 'typebox';
import type { RunResult } from '../../result.js';

// A runbox result as Piston's execute answer (api/src/job.js): stage objects with
// Piston's status letters (isolate's RE, SG, TO, XX and Piston's own OL, EL) and
// isolate's messages; memory in bytes, times in milliseconds.

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

export const PistonStage = Type.Object({
  stdout: Type.String(),
  stderr: Type.String(),
  output: Type.String({ description: 'stdout then stderr.' }),
  code: Nullable(Type.Integer()),
  signal: Nullable(Type.String()),
  message: Nullable(Type.String()),
  status: Nullable(Type.Enum(['RE', 'SG', 'TO', 'OL', 'EL', 'XX'])),
  memory: Nullable(Type.Integer({ description: 'Bytes.' })),
  cpu_time: Nullable(Type.Number({ description: 'Milliseconds.' })),
  wall_time: Nullable(Type.Number({ description: 'Milliseconds.' })),
});
export type PistonStage = Type.Static<typeof PistonStage>;

export const PistonExecuteResponse = Type.Object({
  language: Type.String(),
  version: Type.String(),
  /** Left out when the compile stage failed, as Piston does. */
  run: Type.Optional(PistonStage),
  compile: Type.Optional(PistonStage),
});

export const PistonRuntimeList = Type.Array(
  Type.Object({ language: Type.String(), version: Type.String(), aliases: Type.Array(Type.String()), runtime: Type.Optional(Type.String()) }),
);

export const PistonError = Type.Object({ message: Type.String() });

export const SIGNAL_NAMES: Record<number, string> = {
  1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 4: 'SIGILL', 5: 'SIGTRAP', 6: 'SIGABRT', 7: 'SIGBUS', 8: 'SIGFPE', 9: 'SIGKILL',
  10: 'SIGUSR1', 11: 'SIGSEGV', 12: 'SIGUSR2', 13: 'SIGPIPE', 14: 'SIGALRM', 15: 'SIGTERM', 16: 'SIGSTKFLT', 17: 'SIGCHLD',
  18: 'SIGCONT', 19: 'SIGSTOP', 20: 'SIGTSTP', 21: 'SIGTTIN', 22: 'SIGTTOU', 23: 'SIGURG', 24: 'SIGXCPU', 25: 'SIGXFSZ',
  26: 'SIGVTALRM', 27: 'SIGPROF', 28: 'SIGWINCH', 29: 'SIGIO', 30: 'SIGPWR', 31: 'SIGSYS',
};

const ms = (s: number | null) => (s === null ? null : Math.round(s * 1000));

function runStage(r: RunResult): PistonStage {
  let status: PistonStage['status'] = null;
  let message: string | null = null;
  let signal = r.signal === null ? null : (SIGNAL_NAMES[r.signal] ?? `SIG${r.signal}`);
  switch (r.status) {
    case 'success':
      break;
    case 'runtime_error':
      status = r.signal === null ? 'RE' : 'SG';
      message = r.signal === null ? `Exited with error status ${r.exit_code ?? 1}` : `Caught fatal signal ${r.signal}`;
      break;
    case 'timeout':
      // isolate's words for its CPU-time and wall-clock limits.
      status = 'TO';
      message = r.limit_exceeded === 'wall' ? 'Time limit exceeded (wall clock)' : 'Time limit exceeded';
      signal = 'SIGKILL';
      break;
    case 'memory_limit':
      status = 'SG';
      message = 'Memory limit exceeded';
      signal = 'SIGKILL';
      break;
    case 'output_limit':
      // Piston tells the streams apart; runbox's flood limit counts both.
      status = r.stderr_truncated && !r.stdout_truncated ? 'EL' : 'OL';
      message = status === 'EL' ? 'stderr length exceeded' : 'stdout length exceeded';
      signal = 'SIGKILL';
      break;
    case 'process_limit':
      status = 'RE';
      message = 'Process limit exceeded';
      break;
    case 'compile_error':
    case 'internal_error':
    case 'cancelled':
      status = 'XX';
      message = r.error || 'internal error';
      break;
  }
  return {
    stdout: r.output,
    stderr: r.error,
    output: r.output + r.error,
    code: r.exit_code,
    signal,
    message,
    status,
    memory: r.memory === null ? null : r.memory * 1024,
    cpu_time: ms(r.time),
    wall_time: ms(r.total),
  };
}

/** A compile stage: its messages (runbox keeps them as one text) and how it ended. */
function compileStage(r: RunResult): PistonStage {
  const text = r.compile_output ?? '';
  if (r.status !== 'compile_error') {
    return { stdout: '', stderr: text, output: text, code: 0, signal: null, message: null, status: null, memory: null, cpu_time: null, wall_time: null };
  }
  const stopped = r.signal !== null;
  return {
    stdout: '',
    stderr: text,
    output: text,
    code: r.exit_code,
    signal: stopped ? (SIGNAL_NAMES[r.signal!] ?? `SIG${r.signal}`) : null,
    message: stopped ? `Caught fatal signal ${r.signal}` : `Exited with error status ${r.exit_code ?? 1}`,
    status: stopped ? 'SG' : 'RE',
    memory: r.memory === null ? null : r.memory * 1024,
    cpu_time: ms(r.time),
    wall_time: ms(r.total),
  };
}

export function pistonResponse(r: RunResult, runtime: { language: string; version: string }, compiled: boolean): Type.Static<typeof PistonExecuteResponse> {
  if (!compiled) return { language: runtime.language, version: runtime.version, run: runStage(r) };
  const compile = compileStage(r);
  // Piston runs nothing after a failed compile, and its answer has no `run` then.
  if (r.status === 'compile_error') return { language: runtime.language, version: runtime.version, compile };
  return { language: runtime.language, version: runtime.version, compile, run: runStage(r) };
}
