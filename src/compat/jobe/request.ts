import Type from 'typebox';
import { ApiError } from '../../api/errors.js';
import type { RunToAdmit } from '../../api/middleware/admission.js';
import type { CompilerEntry } from '../../compilers/catalogue.js';
import type { RunOptions, StageLimits } from '../../db/schema.js';
import { clampStageLimit, JOBE_FILE_CACHE, REQUEST_LIMITS, RUN_LIMITS } from '../../limits.js';
import { optionsProblem } from '../../program/compiler-options.js';
import { argsProblem, checkFiles, ProgramError, type DecodedFile } from '../../program/program.js';
import { shellWords } from '../judge0/shell-words.js';
import { JOBE_DEFAULTS, type JobeLanguage } from './languages.js';

// POST /jobe/index.php/restapi/runs's body, checked in the order and with the words of
// Jobe's RunSpecifier (app/Libraries/RunSpecifier.php), then turned into a runbox run.
// `parameters` as Jobe reads them: a non-numeric value of a numeric one is its default,
// cputime above the server's most is refused, memorylimit 0 is the service's limit; the
// compile, link and run arguments become compiler options and arguments, each checked
// as runbox checks them (an option the compiler does not take is a compilation error,
// as it would be from Jobe's compiler); interpreter arguments, which would let a request
// choose the interpreter's own options, are refused.

export const JobeRunSpec = Type.Object(
  {
    language_id: Type.String({ description: 'A language id from GET languages (c, cpp, java, python3, php, nodejs…).' }),
    sourcecode: Type.String(),
    sourcefilename: Type.Optional(Type.String({ description: "The source file's name; default the compiler's own (Java: the public class's)." })),
    input: Type.Optional(Type.String({ description: 'Standard input.' })),
    file_list: Type.Optional(Type.Array(Type.Array(Type.String(), { minItems: 2, maxItems: 3 }), { description: '[file_id, file_name] pairs of files PUT before, written beside the source.' })),
    parameters: Type.Optional(
      Type.Object(
        {
          cputime: Type.Optional(Type.Number({ description: 'CPU seconds (Jobe default 5); killed at twice that in wall time.' })),
          memorylimit: Type.Optional(Type.Number({ description: "MB; 0: the service's limit. Ignored for Java, as Jobe does." })),
          compileargs: Type.Optional(Type.Array(Type.String(), { description: "Compiler options (default: Jobe's, e.g. -Wall -Werror -std=c99 for C); each must be one the compiler takes." })),
          linkargs: Type.Optional(Type.Array(Type.String(), { description: 'Added after the compiler options (-lm).' })),
          runargs: Type.Optional(Type.Array(Type.String(), { description: "The program's arguments." })),
          interpreterargs: Type.Optional(Type.Array(Type.String(), { description: 'Not taken: refused when not empty.' })),
        },
        { additionalProperties: true },
      ),
    ),
    debug: Type.Optional(Type.Boolean({ description: 'Accepted and ignored.' })),
  },
  { additionalProperties: true },
);

export const JobeRunRequest = Type.Object({ run_spec: JobeRunSpec }, { description: "Jobe's submit_run body." });

const bad = (message: string) => new ApiError(400, 'invalid_request', message);

/** Jobe's default CPU seconds (LanguageTask::$default_params). */
const DEFAULT_CPU_SECONDS = 5;
const MAX_CPU_SECONDS = Math.floor(Math.min(RUN_LIMITS.cpuTimeMs, RUN_LIMITS.timeoutMs) / 1000);

/** A run as Jobe's runs route was asked for it. */
export interface JobeRun {
  language: JobeLanguage;
  /** The files of file_list, by cache id and the name each is given. */
  fileRefs: { id: string; name: string }[];
  /** The run to admit, without the cached files (added once they are read). */
  run: RunToAdmit & { runOptions: RunOptions | null };
  /** A compile or link argument the compiler does not take: answered as a compilation error, nothing run. */
  refusedOption?: string;
}

/** Jobe's isValidSourceFilename: the characters its sanitiser would change make the name illegal. */
function validSourceFilename(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  const sanitised = name.replace(/[<>:"/\\|?*]|[\x00-\x1F]|[\x7F\xA0\xAD]|[#[\]@!$&'()+,;=]|[{}^~`]/g, '-').replace(/^[.-]+/, '');
  return sanitised === name && name.length > 0 && Buffer.byteLength(name) <= 255;
}

/** Jobe's isValidFilespec: an id of letters and digits at least 8 long, a name of letters, digits, - _ and . */
function fileSpec(spec: unknown): { id: string; name: string } | undefined {
  if (!Array.isArray(spec) || (spec.length !== 2 && spec.length !== 3)) return undefined;
  const [id, name] = spec as unknown[];
  if (typeof id !== 'string' || typeof name !== 'string') return undefined;
  if (id.length < 8 || id.length > JOBE_FILE_CACHE.idMaxLength || !/^[A-Za-z0-9]+$/.test(id)) return undefined;
  if (!/^[A-Za-z0-9._-]+$/.test(name) || name === '.' || name === '..') return undefined;
  return { id, name };
}

/** A numeric parameter as Jobe's getParam reads it: absent or not a number, the default. */
function numberParam(params: Record<string, unknown>, key: string): number | undefined {
  const v = params[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return undefined;
}

/** An array of strings parameter, each element split as Jobe's shell command line would split it. */
function wordsParam(params: Record<string, unknown>, key: string): string[] | undefined {
  const v = params[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw bad(`parameters.${key} must be a list of strings`);
  return (v as string[]).flatMap((x) => shellWords(x));
}

export function jobeRun(body: unknown, languages: JobeLanguage[], entryOf: (compiler: string) => CompilerEntry | undefined): JobeRun {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw bad('Non-JSON post data received');
  const spec = (body as Record<string, unknown>)['run_spec'];
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw bad('No run_spec attribute found in post data');
  const run = spec as Record<string, unknown>;
  for (const attr of ['sourcecode', 'language_id']) {
    if (run[attr] === undefined || run[attr] === null) throw bad(`run_spec is missing the required attribute '${attr}'`);
    if (typeof run[attr] !== 'string') throw bad(`run_spec attribute '${attr}' must be a string`);
  }
  const languageId = (run['language_id'] as string).toLowerCase();
  const language = languages.find((l) => l.id === languageId);
  if (!language) throw bad(`Language '${languageId}' is not known`);
  const entry = entryOf(language.compiler);
  if (!entry) throw bad(`Language '${languageId}' is not known`);

  const code = run['sourcecode'] as string;
  if (Buffer.byteLength(code) > REQUEST_LIMITS.codeMaxBytes) throw bad(`sourcecode must be at most ${REQUEST_LIMITS.codeMaxBytes} bytes`);
  if (code.includes('\u0000')) throw bad('sourcecode must not contain NUL characters');
  const input = run['input'] ?? '';
  if (typeof input !== 'string') throw bad('input must be a string');
  if (Buffer.byteLength(input) > REQUEST_LIMITS.inputMaxBytes) throw bad(`input must be at most ${REQUEST_LIMITS.inputMaxBytes} bytes`);
  if (input.includes('\u0000')) throw bad('input must not contain NUL characters');

  const rawParams = run['parameters'] ?? {};
  if (typeof rawParams !== 'object' || rawParams === null || Array.isArray(rawParams)) throw bad('parameters must be an object');
  const params = rawParams as Record<string, unknown>;
  const cputime = numberParam(params, 'cputime') ?? DEFAULT_CPU_SECONDS;
  if (Math.trunc(cputime) > MAX_CPU_SECONDS) throw bad(`cputime exceeds maximum allowed on this Jobe server (${MAX_CPU_SECONDS} secs)`);

  let main: string | undefined;
  const sourcefilename = run['sourcefilename'];
  if (sourcefilename !== undefined && sourcefilename !== null && sourcefilename !== '') {
    if (typeof sourcefilename !== 'string' || !validSourceFilename(sourcefilename)) throw bad('The sourcefilename for the run_spec is illegal');
    // Jobe's hack for legacy CodeRunner: 'prog.java' is almost certainly wrong, and ignored.
    if (sourcefilename !== 'prog.java') main = sourcefilename;
  }

  const fileRefs: { id: string; name: string }[] = [];
  const list = run['file_list'] ?? [];
  if (!Array.isArray(list)) throw bad('file_list must be a list of [file_id, file_name] pairs');
  for (const item of list as unknown[]) {
    const ref = fileSpec(item);
    if (!ref) throw bad(`Invalid file specifier: ${JSON.stringify(item)?.slice(0, 200)}`);
    fileRefs.push(ref);
  }

  const interpreterArgs = wordsParam(params, 'interpreterargs') ?? [];
  if (interpreterArgs.length > 0) throw bad('parameters.interpreterargs are not taken by this server: each language runs with its own interpreter options');
  const runArgs = wordsParam(params, 'runargs') ?? [];
  const argsBad = argsProblem(runArgs);
  if (argsBad) throw bad(`parameters.runargs: ${argsBad.problem}`);

  const defaults = JOBE_DEFAULTS[language.id] ?? {};
  const compileArgs = wordsParam(params, 'compileargs') ?? (entry.compile ? (defaults.compileargs ?? []) : []);
  const linkArgs = wordsParam(params, 'linkargs') ?? [];
  const compilerOptions = entry.compile ? [...(defaults.always ?? []), ...compileArgs, ...linkArgs] : [];
  let refusedOption: string | undefined;
  const optionsBad = optionsProblem(entry.id, entry, compilerOptions);
  if (optionsBad) refusedOption = `${compilerOptions[optionsBad.index] ?? ''}: ${optionsBad.message}`;

  const limits: StageLimits = {};
  if (cputime > 0) {
    limits.cpu_ms = clampStageLimit('cpuTimeMs', cputime * 1000);
    // Jobe's runguard kills the job at twice its CPU time in wall time.
    limits.timeout_ms = clampStageLimit('timeoutMs', 2 * cputime * 1000);
  }
  const memoryMb = numberParam(params, 'memorylimit');
  if (memoryMb !== undefined && memoryMb > 0 && !defaults.ignoresMemoryLimit) {
    limits.memory_bytes = clampStageLimit('memoryBytes', memoryMb * 1024 * 1024);
  }

  const options: RunOptions = {};
  if (main !== undefined) options.main = main;
  if (runArgs.length > 0) options.args = runArgs;
  if (compilerOptions.length > 0 && !refusedOption) options.compiler_options = compilerOptions;
  if (Object.keys(limits).length > 0) options.run = limits;
  if (defaults.syntaxCheck && entry.check !== undefined) options.syntax_check = true;
  return {
    language,
    fileRefs,
    refusedOption,
    run: { compiler: language.compiler, code, input, tests: null, extraParams: null, runOptions: Object.keys(options).length > 0 ? options : null },
  };
}

/** The run with the cached files beside its source (a file named like the source cannot replace it). */
export function withFiles(job: JobeRun, files: DecodedFile[]): JobeRun['run'] {
  if (files.length === 0) return job.run;
  try {
    checkFiles(files, 'file_list');
  } catch (err) {
    if (err instanceof ProgramError) throw bad(err.message);
    throw err;
  }
  const options: RunOptions = { ...(job.run.runOptions ?? {}), files: files.map((f) => ({ name: f.name, content_base64: f.content.toString('base64') })) };
  return { ...job.run, runOptions: options };
}
