import type { CompilerEntry } from '../compilers/catalogue.js';
import type { RunFile, RunOptions, StageLimits } from '../db/schema.js';
import { PROGRAM_LIMITS, REQUEST_LIMITS, RUN_LIMITS, STAGE_LIMIT_FLOORS, wallTimeMsFor } from '../limits.js';
import { optionsProblem } from './compiler-options.js';
import type { ProgramFile, ProgramRequest, RunLimitsRequest } from './fields.js';
import { nameConflict, pathProblem } from './paths.js';

// A request's program, checked and turned into what a submission stores: `code` (the
// main file's text) and its run options (the other files, the main file's name,
// arguments, compiler options, lower run limits, return_files). Every face reads its
// program here: the REST run endpoints and the WebSocket run message through
// readProgram, the Piston and Judge0 routes through the same checks (checkFiles,
// argsProblem, optionsProblem) in their own error shapes.

/** A rule of the program broken: the field's path (files.3.name) and what is wrong. */
export class ProgramError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** A program's file with its content decoded. */
export interface DecodedFile {
  name: string;
  content: Buffer;
  /** Sent as text (utf-8): code's rules apply to it. */
  text: boolean;
}

/** What a submission stores of its program. */
export interface Program {
  code: string;
  options: RunOptions;
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const n = (x: number) => x.toLocaleString('en-US');

/** Base64 text as bytes; undefined when it is not Base64 (padded, no line breaks). */
export function decodeBase64(text: string): Buffer | undefined {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : undefined;
}

/** A request's files (text, or Base64 with encoding base64) as bytes; throws ProgramError naming one that is not Base64. */
export function decodeFiles(files: readonly ProgramFile[]): DecodedFile[] {
  return files.map((f, i): DecodedFile => {
    if (f.encoding !== 'base64') return { name: f.name, content: Buffer.from(f.content, 'utf8'), text: true };
    const content = decodeBase64(f.content);
    if (!content) throw new ProgramError(`files.${i}.content`, 'is not Base64 (padded, without line breaks)');
    return { name: f.name, content, text: false };
  });
}

/** The file's content as UTF-8 text by code's rules, or why it is not. */
export function asProgramText(content: Buffer): { text: string } | { problem: string } {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(content);
  } catch {
    return { problem: 'is not UTF-8 text' };
  }
  if (text.includes('\u0000')) return { problem: 'must not contain NUL characters' };
  if (content.length > REQUEST_LIMITS.codeMaxBytes) return { problem: `is ${n(content.length)} bytes; a text file holds at most ${n(REQUEST_LIMITS.codeMaxBytes)} (code's limit)` };
  return { text };
}

/** Checks the names, number and sizes of a program's files; `field` names them in errors (files). */
export function checkFiles(files: readonly DecodedFile[], field = 'files'): void {
  if (files.length === 0) throw new ProgramError(field, 'must hold at least one file');
  if (files.length > PROGRAM_LIMITS.filesMax) throw new ProgramError(field, `at most ${PROGRAM_LIMITS.filesMax} files (got ${files.length})`);
  let bytes = 0;
  for (const [i, f] of files.entries()) {
    const problem = pathProblem(f.name);
    if (problem) throw new ProgramError(`${field}.${i}.name`, `${JSON.stringify(f.name.slice(0, 300))} ${problem}`);
    if (f.text) {
      const text = asProgramText(f.content);
      if ('problem' in text) throw new ProgramError(`${field}.${i}.content`, text.problem);
    }
    bytes += f.content.length;
  }
  if (bytes > PROGRAM_LIMITS.filesMaxBytes) {
    throw new ProgramError(field, `the files hold ${n(bytes)} bytes together; at most ${n(PROGRAM_LIMITS.filesMaxBytes)}`);
  }
  const conflict = nameConflict(files.map((f) => f.name));
  if (conflict) throw new ProgramError(`${field}.${conflict.index}.name`, conflict.problem);
}

/** The program from checked files: the main one's text becomes `code`, the rest are stored beside it. */
export function programOfFiles(files: readonly DecodedFile[], mainName: string | undefined, field = 'files'): Program {
  checkFiles(files, field);
  const mainIndex = mainName === undefined ? 0 : files.findIndex((f) => f.name === mainName);
  if (mainIndex < 0) throw new ProgramError('main', `no file of ${field} is named ${JSON.stringify(mainName)}`);
  const main = files[mainIndex]!;
  const text = asProgramText(main.content);
  if ('problem' in text) throw new ProgramError(`${field}.${mainIndex}.content`, `${text.problem}: it is the main file, the program`);
  const others: RunFile[] = files.filter((_, i) => i !== mainIndex).map((f) => ({ name: f.name, content_base64: f.content.toString('base64') }));
  return { code: text.text, options: { main: main.name, ...(others.length > 0 ? { files: others } : {}) } };
}

/** Why the program's arguments break a rule, or undefined. */
export function argsProblem(args: readonly string[]): { field: string; problem: string } | undefined {
  if (args.length > PROGRAM_LIMITS.argsMax) return { field: 'args', problem: `at most ${PROGRAM_LIMITS.argsMax} arguments (got ${args.length})` };
  for (const [i, a] of args.entries()) {
    if (a.includes('\u0000')) return { field: `args.${i}`, problem: 'must not contain NUL characters' };
    const bytes = Buffer.byteLength(a);
    if (bytes > PROGRAM_LIMITS.argMaxBytes) return { field: `args.${i}`, problem: `is ${n(bytes)} bytes; at most ${n(PROGRAM_LIMITS.argMaxBytes)}` };
  }
  return undefined;
}

/** The run stage's limits a request asks for, checked against the service's and the floors. */
export function runLimits(limits: RunLimitsRequest): StageLimits {
  const seconds = (name: 'time' | 'wall_time', value: number | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const min = STAGE_LIMIT_FLOORS.timeoutMs / 1000;
    const max = RUN_LIMITS.timeoutMs / 1000;
    if (!Number.isFinite(value) || value > max) throw new ProgramError(`limits.${name}`, `at most ${max} seconds (the service's limit); got ${value}`);
    if (value < min) throw new ProgramError(`limits.${name}`, `at least ${min} seconds; got ${value}`);
    return Math.round(value * 1000);
  };
  const cpu = seconds('time', limits.time);
  const wall = seconds('wall_time', limits.wall_time);
  const out: StageLimits = {};
  if (cpu !== undefined) out.cpu_ms = cpu;
  // A CPU-bound run ends at its CPU time; one that waits at the wall limit beside it.
  const timeout = wall ?? (cpu === undefined ? undefined : wallTimeMsFor(cpu));
  if (timeout !== undefined) out.timeout_ms = timeout;
  if (limits.memory !== undefined) {
    const min = STAGE_LIMIT_FLOORS.memoryBytes / 1024;
    const max = RUN_LIMITS.memoryBytes / 1024;
    if (limits.memory > max) throw new ProgramError('limits.memory', `at most ${n(max)} KB (the service's limit); got ${n(limits.memory)}`);
    if (limits.memory < min) throw new ProgramError('limits.memory', `at least ${n(min)} KB; got ${n(limits.memory)}`);
    out.memory_bytes = limits.memory * 1024;
  }
  return out;
}

/**
 * A run request's program (REST body, WebSocket run message), checked against the rules
 * and `entry`'s recipe; throws ProgramError naming the first field that breaks one.
 */
export function readProgram(req: ProgramRequest, entry: Pick<CompilerEntry, 'id' | 'compile' | 'options'>): Program {
  if (req.code !== undefined && req.files !== undefined) throw new ProgramError('files', 'give either code or files, not both');
  let program: Program;
  if (req.files !== undefined) {
    program = programOfFiles(decodeFiles(req.files), req.main);
  } else {
    if (req.code === undefined) throw new ProgramError('code', 'missing required field code (or files)');
    if (req.main !== undefined) throw new ProgramError('main', 'names a file of files; with code there is one file');
    program = { code: req.code, options: {} };
  }
  const options = program.options;
  if (req.args !== undefined) {
    const bad = argsProblem(req.args);
    if (bad) throw new ProgramError(bad.field, bad.problem);
    if (req.args.length > 0) options.args = req.args;
  }
  if (req.compiler_options !== undefined) {
    const bad = optionsProblem(entry.id, entry, req.compiler_options);
    if (bad) throw new ProgramError(`compiler_options.${bad.index}`, bad.message);
    if (req.compiler_options.length > 0) options.compiler_options = req.compiler_options;
  }
  if (req.limits !== undefined) {
    const run = runLimits(req.limits);
    if (Object.keys(run).length > 0) options.run = run;
  }
  if (req.return_files === true) options.return_files = true;
  return program;
}
