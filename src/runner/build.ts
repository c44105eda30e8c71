import type { StageLimits } from '../db/schema.js';
import { clampStageLimit, RUN_LIMITS } from '../limits.js';
import type { ProgramPlan, StagePlan } from '../program/plan.js';
import type { Execution } from '../result.js';
import type { SandboxOutcome, SandboxSpec } from '../sandbox/spec.js';
import { outputText, wholeCharacters } from '../util/output-text.js';
import { executionFields } from './verdict.js';

// A program's compile stage, as its recipe plans it, to the run stage it hands on: the
// program's files with what the compiler made (which wins over a file of the same name).
// The submission's program and a judged run's checker and interactor are built alike.

export type Built =
  | { ok: true; run: StagePlan; compileOutput: string | null }
  | { ok: false; compiled: SandboxOutcome; fields: Execution; compileOutput: string; problems: string[] };

const RUN_FILES_NOTE = `${RUN_LIMITS.collectFiles.toLocaleString('en-US')} files or ${RUN_LIMITS.collectBytes / 1024 / 1024} MiB`;

export async function buildProgram(plan: ProgramPlan, compile: (planned: StagePlan) => Promise<SandboxOutcome>): Promise<Built> {
  if (!plan.compile) return { ok: true, run: plan.run, compileOutput: null };
  const compiled = await compile(plan.compile);
  const fields = executionFields(compiled);
  const compileOutput = outputText(
    Buffer.concat([compiled.stdoutTruncated ? wholeCharacters(compiled.stdout) : compiled.stdout, compiled.stderr]),
    compiled.stderrTruncated,
  );
  const missing = plan.compile.required.filter((name) => !compiled.collected.some((f) => f.name === name));
  // A file named with bytes that are not UTF-8 is left behind (listed nowhere: the run stage could not be given it).
  const over = compiled.omitted.filter((f) => f.reason === 'limits');
  if (fields.status !== 'success' || missing.length > 0 || over.length > 0 || compiled.collectLost !== undefined || plan.problem !== undefined) {
    const problems = fields.status !== 'success' ? [] : [
      // Compiled, but with nothing to start: the recipe's entry point is in no source.
      ...(plan.problem !== undefined ? [plan.problem] : []),
      ...(missing.length > 0 ? [`compilation produced no ${missing.join(', ')}`] : []),
      ...(over.length > 0 ? [`compilation produced more than the run stage takes (${over.length} files left out past ${RUN_FILES_NOTE})`] : []),
      ...(compiled.collectLost !== undefined ? ['the files compilation produced could not all be brought back'] : []),
    ];
    return { ok: false, compiled, fields, compileOutput, problems };
  }
  const made = new Set(compiled.collected.map((c) => c.name));
  return { ok: true, run: { ...plan.run, files: [...plan.run.files.filter((f) => !made.has(f.name)), ...compiled.collected] }, compileOutput };
}

/** A failed build's messages, with a note when the compiler was stopped or made nothing runnable. */
export function buildErrorText(built: Extract<Built, { ok: false }>): string {
  const notes: string[] = [];
  if (built.fields.status !== 'success' && built.fields.status !== 'runtime_error') notes.push(`compilation stopped: ${built.fields.status.replace('_', ' ')}`);
  notes.push(...built.problems);
  let error = built.compileOutput;
  for (const note of notes) error += (error === '' || error.endsWith('\n') ? '' : '\n') + note + '\n';
  return error;
}

/** A stage's own limits, never above the service's (the API clamps them; this holds for any row). */
export function stageLimits(given: StageLimits | undefined): SandboxSpec['limits'] | undefined {
  if (!given) return undefined;
  const limits: NonNullable<SandboxSpec['limits']> = {};
  if (given.timeout_ms !== undefined) limits.timeoutMs = clampStageLimit('timeoutMs', given.timeout_ms);
  if (given.memory_bytes !== undefined) limits.memoryBytes = clampStageLimit('memoryBytes', given.memory_bytes);
  if (given.cpu_ms !== undefined) limits.cpuTimeMs = clampStageLimit('cpuTimeMs', given.cpu_ms);
  return Object.keys(limits).length > 0 ? limits : undefined;
}
