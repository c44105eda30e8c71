import Type from 'typebox';
import { ApiError } from '../../api/errors.js';
import type { RunToAdmit } from '../../api/middleware/admission.js';
import type { CallbackTarget, RunOptions } from '../../db/schema.js';
import { clampStageLimit, REQUEST_LIMITS, wallTimeMsFor } from '../../limits.js';
import { optionsProblem } from '../../program/compiler-options.js';
import { argsProblem, checkFiles, decodeBase64, ProgramError, type DecodedFile } from '../../program/program.js';
import { ArchiveError, unzipFiles } from './archive.js';
import { compilerOfLanguage } from './languages.js';
import { shellWords } from './shell-words.js';
import type { Judge0Kept } from './view.js';

// A Judge0 submission request (app/models/submission.rb's validations, with its
// messages) turned into a runbox run. Limits above runbox's are clamped, never raised:
// cpu_time_limit is the run's CPU time, as isolate's --time (past it Time Limit
// Exceeded), wall_time_limit its wall-clock limit (else runbox's rule beside the CPU
// time, TIME_LIMIT_RULE; cpu_extra_time is kept and shown, not used), memory_limit is in KB. additional_files (a Base64 zip) is
// unpacked beside the source; language 89, the Multi-file program, runs the zip's
// `compile` (when it has one) and `run` scripts with bash. compiler_options and
// command_line_arguments are split as bash splits them in Judge0's scripts, after
// Judge0 strips $ & ; < > | and backquotes; the options must be of a form the
// compiler allows. What runbox cannot do (network) is refused rather than ignored.

/** Judge0's validation answer: 422 {"field": ["message", …]}. */
export class Judge0FieldErrors extends ApiError {
  constructor(readonly fields: Record<string, string[]>) {
    super(422, 'invalid_fields', Object.entries(fields).map(([f, m]) => `${f} ${m.join(', ')}`).join('; '));
  }
}

const Num = (description: string) => Type.Optional(Type.Union([Type.Number(), Type.String()], { description }));
const Text = (description: string) => Type.Optional(Type.Union([Type.String(), Type.Null()], { description }));

export const Judge0SubmissionRequest = Type.Object(
  {
    source_code: Type.String({ description: 'Base64 encoded with ?base64_encoded=true.' }),
    language_id: Type.Union([Type.Integer(), Type.String()], { description: 'A Judge0 CE language id (GET /judge0/languages).' }),
    stdin: Text('Base64 encoded with ?base64_encoded=true.'),
    expected_output: Text('Judged against stdout: Accepted or Wrong Answer. Base64 encoded with ?base64_encoded=true.'),
    cpu_time_limit: Num('Seconds.'),
    cpu_extra_time: Num('Seconds.'),
    wall_time_limit: Num('Seconds.'),
    memory_limit: Num('KB.'),
    stack_limit: Num('Accepted; runbox applies its own.'),
    max_processes_and_or_threads: Num('Accepted; runbox applies its own.'),
    max_file_size: Num('Accepted; runbox applies its own.'),
    number_of_runs: Num('Accepted; runbox runs once.'),
    command_line_arguments: Text('Split as bash splits words (quotes kept together), after $ & ; < > | and backquotes are removed; passed to the program.'),
    compiler_options: Text("Split like command_line_arguments and added to the compile stage; each must be of a form the compiler allows (GET /api/compilers/)."),
    additional_files: Text('A Base64 zip unpacked beside the program (nothing in it replaces the source). Language 89 (Multi-file program): its run script and optional compile script. Language 82 (SQLite): its db.sqlite is the database the script runs against.'),
    redirect_stderr_to_stdout: Type.Optional(Type.Boolean()),
    callback_url: Text("Receives the finished submission by PUT, through runbox's signed, retried callback sender."),
  },
  { description: 'A Judge0 CE submission.' },
);

export const Judge0BatchRequest = Type.Object({ submissions: Type.Array(Judge0SubmissionRequest) });

export interface Judge0Run {
  run: RunToAdmit;
}

const isBlank = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.trim() === '');

function decodeText(value: unknown, base64: boolean): string | null | 'invalid' {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') return 'invalid';
  if (!base64) return value;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(value, 'base64'));
  } catch {
    return 'invalid';
  }
}

/** Judge0's Multi-file program: no source of its own, the archive's scripts. */
export const MULTI_FILE_LANGUAGE = 89;
const JUDGE0_STRIPPED = /[$&;<>|`]/g;

export async function judge0Run(body: unknown, base64: boolean, recipesDir = ''): Promise<Judge0Run> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Judge0FieldErrors({ submission: ['must be a JSON object'] });
  const b = body as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);

  const languageId = typeof b['language_id'] === 'string' && /^\d+$/.test(b['language_id']) ? Number(b['language_id']) : b['language_id'];
  const project = languageId === MULTI_FILE_LANGUAGE;
  // A multi-file program's source is its archive's run script; Judge0 ignores source_code then.
  const code = project ? '' : decodeText(b['source_code'], base64);
  if (project) {
    if (isBlank(b['additional_files'])) add('additional_files', "can't be blank for a multi-file program");
  } else if (isBlank(b['source_code'])) add('source_code', "can't be blank");
  else if (code === 'invalid' || code === null || code.includes('\u0000')) add('source_code', base64 ? 'is not Base64 encoded UTF-8 text' : 'must be UTF-8 text without NUL characters');
  else if (Buffer.byteLength(code) > REQUEST_LIMITS.codeMaxBytes) add('source_code', `is too long (maximum is ${REQUEST_LIMITS.codeMaxBytes} bytes)`);

  let compiler: ReturnType<typeof compilerOfLanguage>;
  if (isBlank(b['language_id'])) add('language_id', "can't be blank");
  else if (typeof languageId !== 'number' || !Number.isInteger(languageId) || !(compiler = compilerOfLanguage(languageId, recipesDir))) {
    add('language_id', `language with id ${String(b['language_id'])} doesn't exist`);
  }

  const texts: Record<'stdin' | 'expected_output', string | null> = { stdin: null, expected_output: null };
  for (const field of ['stdin', 'expected_output'] as const) {
    const value = decodeText(b[field], base64);
    if (value === 'invalid' || (value !== null && value.includes('\u0000'))) add(field, base64 ? 'is not Base64 encoded UTF-8 text' : 'must be UTF-8 text without NUL characters');
    else if (value !== null && Buffer.byteLength(value) > REQUEST_LIMITS.inputMaxBytes) add(field, `is too long (maximum is ${REQUEST_LIMITS.inputMaxBytes} bytes)`);
    else texts[field] = value;
  }

  const numbers: Record<string, number | null> = {};
  for (const field of ['cpu_time_limit', 'cpu_extra_time', 'wall_time_limit', 'memory_limit', 'stack_limit', 'max_processes_and_or_threads', 'max_file_size', 'number_of_runs']) {
    const v = b[field];
    if (v === undefined || v === null || v === '') {
      numbers[field] = null;
      continue;
    }
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isFinite(n)) add(field, 'is not a number');
    else if (n < 0) add(field, 'must be greater than or equal to 0');
    else numbers[field] = n;
  }

  const argsText = b['command_line_arguments'];
  let args: string[] = [];
  if (argsText !== undefined && argsText !== null && (typeof argsText !== 'string' || argsText.length > 512 || argsText.includes('\u0000'))) {
    add('command_line_arguments', 'is too long (maximum is 512 characters)');
  } else if (typeof argsText === 'string') {
    args = shellWords(argsText.replace(JUDGE0_STRIPPED, ''));
    const bad = argsProblem(args);
    if (bad) add('command_line_arguments', bad.problem);
  }
  const optionsText = b['compiler_options'];
  let compilerOptions: string[] = [];
  if (optionsText !== undefined && optionsText !== null && (typeof optionsText !== 'string' || optionsText.length > 512 || optionsText.includes('\u0000'))) {
    add('compiler_options', 'is too long (maximum is 512 characters)');
  } else if (typeof optionsText === 'string' && compiler?.compile) {
    // Options only reach a compile stage: for an interpreter Judge0 has none to give them to.
    compilerOptions = shellWords(optionsText.replace(JUDGE0_STRIPPED, ''));
    const bad = optionsProblem(compiler.id, compiler, compilerOptions);
    if (bad) add('compiler_options', bad.message);
  }
  let additional: DecodedFile[] = [];
  if (!isBlank(b['additional_files'])) {
    const zip = typeof b['additional_files'] === 'string' ? decodeBase64(b['additional_files']) : undefined;
    if (!zip) add('additional_files', 'is not Base64 encoded');
    else {
      try {
        additional = await unzipFiles(zip);
        if (additional.length > 0) checkFiles(additional, 'additional_files');
      } catch (err) {
        if (err instanceof ArchiveError || err instanceof ProgramError) add('additional_files', err instanceof ProgramError ? err.message.replace(/^additional_files: /, '') : err.message);
        else throw err;
      }
    }
  }
  if (project && !errors['additional_files'] && !additional.some((f) => f.name === 'run')) add('additional_files', 'must hold a run script for a multi-file program');
  let callback: CallbackTarget | null = null;
  const url = b['callback_url'];
  if (!isBlank(url)) {
    let parsed: URL | undefined;
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || (url as string).length > 2048) add('callback_url', 'is not a valid http or https URL');
    else callback = { url: url as string, method: 'PUT', format: 'judge0' };
  }
  if (b['enable_network'] === true) add('enable_network', 'this option cannot be enabled');
  if (Object.keys(errors).length > 0) throw new Judge0FieldErrors(errors);

  const options: RunOptions = {};
  let source = code as string;
  if (project) {
    // The run script is the program; the rest of the archive beside it.
    const run = additional.find((f) => f.name === 'run')!;
    source = run.content.toString('utf8');
    additional = additional.filter((f) => f !== run);
  }
  if (additional.length > 0) options.files = additional.map((f) => ({ name: f.name, content_base64: f.content.toString('base64') }));
  if (args.length > 0) options.args = args;
  if (compilerOptions.length > 0) options.compiler_options = compilerOptions;
  const wall = numbers['wall_time_limit'] ?? null;
  const cpu = numbers['cpu_time_limit'] ?? null;
  const cpuMs = cpu !== null && cpu > 0 ? clampStageLimit('cpuTimeMs', cpu * 1000) : null;
  const wallMs = wall !== null && wall > 0 ? clampStageLimit('timeoutMs', wall * 1000) : cpuMs === null ? null : wallTimeMsFor(cpuMs);
  if (cpuMs !== null || wallMs !== null || numbers['memory_limit']) {
    options.run = {};
    if (cpuMs !== null) options.run.cpu_ms = cpuMs;
    if (wallMs !== null) options.run.timeout_ms = wallMs;
    if (numbers['memory_limit']) options.run.memory_bytes = clampStageLimit('memoryBytes', numbers['memory_limit'] * 1024);
  }
  // Judged as runbox judges: the lines comparison is Judge0's (each line without trailing
  // whitespace, trailing empty lines ignored), over the whole output rather than the
  // 64 KB a result keeps; the verdict becomes Judge0's status (statuses.ts).
  if (texts.expected_output !== null) options.judge = { checker: { type: 'lines' }, interactor: null, stop_on_failure: false, expected_output: texts.expected_output };
  const kept: Judge0Kept = {
    language_id: languageId as number,
    expected_output: texts.expected_output,
    callback_url: callback?.url ?? null,
    command_line_arguments: typeof argsText === 'string' ? argsText : null,
    cpu_time_limit: cpu,
    cpu_extra_time: numbers['cpu_extra_time'] ?? null,
    wall_time_limit: wall,
    memory_limit: numbers['memory_limit'] ?? null,
    redirect_stderr_to_stdout: b['redirect_stderr_to_stdout'] === true,
  };
  return {
    run: {
      compiler: compiler!.id,
      code: source,
      input: texts.stdin,
      tests: null,
      extraParams: null,
      runOptions: Object.keys(options).length > 0 ? options : null,
      callback,
      compat: kept as unknown as Record<string, unknown>,
    },
  };
}
