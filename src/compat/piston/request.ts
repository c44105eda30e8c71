import Type from 'typebox';
import { ApiError } from '../../api/errors.js';
import type { RunToAdmit } from '../../api/middleware/admission.js';
import type { RunFile, RunOptions, StageLimits } from '../../db/schema.js';
import { clampStageLimit, REQUEST_LIMITS } from '../../limits.js';
import { argsProblem, checkFiles, ProgramError, type DecodedFile } from '../../program/program.js';
import { findRuntime, type PistonRuntime } from './runtimes.js';

// POST /piston/api/v2/execute's body, checked in the order and with the messages of
// Piston's get_job() (api/src/api/v2.js), then turned into a runbox run: the first
// UTF-8 file is the main source, every other file is written beside it (names may have
// directories, as Piston's), the recipe builds them together as Piston's packages do
// (every C, C++, Java… file of the request), args follow the run command, and the
// limits asked for are clamped to runbox's (never raised).

export const PistonFile = Type.Object({
  name: Type.Optional(Type.String({ description: 'File name, a relative path (src/util.c). Default file<N>.code.' })),
  content: Type.String(),
  encoding: Type.Optional(Type.Enum(['utf8', 'base64', 'hex'])),
});

const Ms = (description: string) => Type.Optional(Type.Number({ description }));

export const PistonExecuteRequest = Type.Object(
  {
    language: Type.String({ description: 'A language name or alias from /piston/api/v2/runtimes.' }),
    version: Type.String({ description: 'A version or semver range (`*` for any).' }),
    files: Type.Array(PistonFile, { minItems: 1, description: 'The first UTF-8 file is the main source; the others are written beside it and built with it.' }),
    stdin: Type.Optional(Type.String()),
    args: Type.Optional(Type.Array(Type.String(), { description: 'Passed to the program.' })),
    compile_timeout: Ms('Milliseconds; clamped to runbox\'s stage timeout.'),
    run_timeout: Ms('Milliseconds; clamped to runbox\'s stage timeout.'),
    compile_memory_limit: Ms('Bytes; -1 or absent: runbox\'s limit; clamped to it.'),
    run_memory_limit: Ms('Bytes; -1 or absent: runbox\'s limit; clamped to it.'),
    compile_cpu_time: Ms("Milliseconds of CPU time; clamped to runbox's."),
    run_cpu_time: Ms("Milliseconds of CPU time; clamped to runbox's."),
  },
  { description: "Piston v2's execute request." },
);

const bad = (message: string) => new ApiError(400, 'invalid_request', message);

function decode(content: string, encoding: string): Buffer {
  if (encoding === 'base64') return Buffer.from(content, 'base64');
  if (encoding === 'hex') return Buffer.from(content, 'hex');
  return Buffer.from(content, 'utf8');
}

export interface PistonJob {
  runtime: PistonRuntime;
  run: RunToAdmit;
}

export function pistonJob(body: unknown, runtimes: PistonRuntime[]): PistonJob {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('the body must be a JSON object');
  const b = body as Record<string, unknown>;
  const { language, version, files } = b;
  if (!language || typeof language !== 'string') throw bad('language is required as a string');
  if (!version || typeof version !== 'string') throw bad('version is required as a string');
  if (!files || !Array.isArray(files)) throw bad('files is required as an array');
  for (const [i, file] of (files as unknown[]).entries()) {
    if (typeof file !== 'object' || file === null || typeof (file as { content?: unknown }).content !== 'string') {
      throw bad(`files[${i}].content is required as a string`);
    }
  }
  const runtime = findRuntime(runtimes, language, version);
  if (!runtime) throw bad(`${language}-${version} runtime is unknown`);
  const list = files as { name?: unknown; content: string; encoding?: unknown }[];
  if (!list.some((f) => f.encoding === undefined || f.encoding === 'utf8')) throw bad('files must include at least one utf8 encoded file');

  const limits: { compile: StageLimits; run: StageLimits } = { compile: {}, run: {} };
  for (const constraint of ['memory_limit', 'timeout', 'cpu_time'] as const) {
    for (const type of ['compile', 'run'] as const) {
      const name = `${type}_${constraint}`;
      const value = b[name];
      if (!value) continue;
      if (typeof value !== 'number' || !Number.isFinite(value)) throw bad(`If specified, ${name} must be a number`);
      // Piston's own configured memory limit is -1 (none): -1 asks for the default.
      if (value < 0 && constraint !== 'memory_limit') throw bad(`${name} must be non-negative`);
      if (value < 0) continue;
      if (constraint === 'timeout') limits[type].timeout_ms = clampStageLimit('timeoutMs', value);
      if (constraint === 'memory_limit') limits[type].memory_bytes = clampStageLimit('memoryBytes', value);
      if (constraint === 'cpu_time') limits[type].cpu_ms = clampStageLimit('cpuTimeMs', value);
    }
  }

  const mainIndex = list.findIndex((f) => f.encoding === undefined || f.encoding === 'utf8');
  const decoded: DecodedFile[] = [];
  for (const [i, f] of list.entries()) {
    const encoding = f.encoding ?? 'utf8';
    if (encoding !== 'utf8' && encoding !== 'base64' && encoding !== 'hex') throw bad(`files[${i}].encoding must be utf8, base64 or hex`);
    const name = f.name === undefined || f.name === null || f.name === '' ? `file${i}.code` : f.name;
    if (typeof name !== 'string') throw bad(`files[${i}].name must be a string`);
    decoded.push({ name, content: decode(f.content, encoding), text: i === mainIndex });
  }
  try {
    checkFiles(decoded);
  } catch (err) {
    if (err instanceof ProgramError) throw bad(err.message.replace(/\bfiles\.(\d+)/g, 'files[$1]'));
    throw err;
  }
  // The main file goes under the name its compiler expects (Piston's packages rename it
  // likewise); a file named like it cannot replace it.
  const beside: RunFile[] = decoded.filter((_, i) => i !== mainIndex).map((f) => ({ name: f.name, content_base64: f.content.toString('base64') }));

  const stdin = b['stdin'] ?? '';
  if (typeof stdin !== 'string') throw bad('stdin must be a string');
  if (Buffer.byteLength(stdin) > REQUEST_LIMITS.inputMaxBytes) throw bad(`stdin must be at most ${REQUEST_LIMITS.inputMaxBytes} bytes`);
  if (stdin.includes('\u0000')) throw bad('stdin must not contain NUL characters');
  const args = b['args'] ?? [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) throw bad('args must be an array of strings');
  const argsBad = argsProblem(args as string[]);
  if (argsBad) throw bad(`${argsBad.field}: ${argsBad.problem}`);

  const options: RunOptions = {};
  if (beside.length > 0) options.files = beside;
  if (args.length > 0) options.args = args as string[];
  if (Object.keys(limits.compile).length > 0) options.compile = limits.compile;
  if (Object.keys(limits.run).length > 0) options.run = limits.run;
  return {
    runtime,
    run: {
      compiler: runtime.compiler,
      code: decoded[mainIndex]!.content.toString('utf8'),
      input: stdin,
      tests: null,
      extraParams: null,
      runOptions: Object.keys(options).length > 0 ? options : null,
    },
  };
}

/** Piston ends a stdin that does not end in a newline with one (api/src/job.js, since 2023), an empty one too. */
export function pistonStdin(stdin: string | null): string {
  const text = stdin ?? '';
  return text.endsWith('\n') ? text : `${text}\n`;
}
