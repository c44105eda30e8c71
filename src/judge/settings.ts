import Type, { type Static } from 'typebox';
import { JUDGE_LIMITS, REQUEST_LIMITS } from '../limits.js';
import { isPlainName } from '../sandbox/archive.js';
import { DEFAULT_CHECKER, type BuiltinChecker } from './checkers/index.js';
import { CONVENTIONS, type Convention } from './conventions.js';

// How a request (or a stored problem) asks to be judged: the comparison (a built-in
// checker or a checker program), an interactor, and whether to stop at the first test
// that fails. Declared once as TypeBox schemas (they validate requests and are
// published in the OpenAPI document) and normalised here into what a submission keeps.

const CompilerId = Type.Unsafe<string>({ type: 'string', description: 'Compiler identifier (see GET /api/compilers/).', 'x-runbox-compiler-id': true });

const Tolerance = (which: string) =>
  Type.Number({ minimum: 0, description: `${which} tolerance (default 1e-6; 0 turns it off). A number is accepted within either tolerance.` });

/** One schema per built-in checker (a unit test holds them to BUILTIN_CHECKER_TYPES). */
export const builtinMembers = [
  Type.Object({ type: Type.Literal('lines') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('exact') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('tokens') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('floats'), absolute: Type.Optional(Tolerance('Absolute')), relative: Type.Optional(Tolerance('Relative')) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('unordered_lines') }, { additionalProperties: false }),
] as const;

export const ProgramFileSchema = Type.Object(
  {
    name: Type.String({ description: 'A plain file name (no directories).' }),
    content: Type.String(),
    encoding: Type.Optional(Type.Enum(['utf-8', 'base64'], { description: 'Default utf-8.' })),
  },
  { additionalProperties: false },
);

const programFields = {
  compiler: CompilerId,
  code: Type.Optional(Type.String({ description: 'The source, a single file (or give files).' })),
  files: Type.Optional(Type.Array(ProgramFileSchema, { minItems: 1, maxItems: JUDGE_LIMITS.programFilesMax, description: 'Its files (testlib.h among them for a testlib program), instead of code.' })),
  main: Type.Optional(Type.String({ description: 'With files: the file that is the program (default: the first).' })),
  convention: Type.Enum([...CONVENTIONS], { description: 'testlib: argv input output answer (an interactor: input output), exit 0/1/2/3/7, message on stderr. kattis: argv input answer feedback_dir, the output on stdin, exit 42/43, feedback_dir/judgemessage.txt.' }),
};

export const CheckerProgramSchema = Type.Object(
  { type: Type.Literal('program'), ...programFields },
  { additionalProperties: false, description: 'A checker program, compiled once per request and run after each test in a sandbox of its own.' },
);

export const CheckerSchema = Type.Union([...builtinMembers, CheckerProgramSchema], {
  description:
    'How an output is compared with the expected one: a built-in comparison, lines (the default: each line without trailing whitespace, trailing empty lines ignored), exact, tokens, floats (tokens; numbers within an absolute or relative tolerance), unordered_lines; or a checker program.',
});
export type CheckerRequest = Static<typeof CheckerSchema>;

export const InteractorSchema = Type.Object(programFields, {
  additionalProperties: false,
  description: "An interactor, run beside each test in its own sandbox: its stdout is the program's stdin and the program's stdout its stdin.",
});
export type InteractorRequest = Static<typeof InteractorSchema>;

/** A file beside a program's main source, as a submission keeps it. */
export interface KeptFile {
  name: string;
  content_base64: string;
}

/** A checker or interactor program as a submission (or a problem version) keeps it. */
export interface ProgramSource {
  compiler: string;
  /** The main source. */
  code: string;
  /** Other files, written beside it (a header, testlib.h). */
  files: KeptFile[];
  convention: Convention;
}

export type CheckerSetting = BuiltinChecker | ({ type: 'program' } & ProgramSource);

/** What a judged submission keeps in run_options.judge. */
export interface JudgeSettings {
  checker: CheckerSetting;
  interactor: ProgramSource | null;
  stop_on_failure: boolean;
  /** A run of a stored problem: its tests, checker, interactor and limits are that version's. */
  problem?: { id: string; version: number };
}

export class JudgeSettingsError extends Error {}

/** A program as sent (code, or files and main) as it is kept; throws JudgeSettingsError naming what is wrong. */
export function programSource(req: InteractorRequest, field: string): ProgramSource {
  if ((req.code === undefined) === (req.files === undefined)) throw new JudgeSettingsError(`${field}: give either code or files`);
  if (req.code !== undefined) {
    if (req.main !== undefined) throw new JudgeSettingsError(`${field}.main goes with files, not code`);
    checkText(req.code, `${field}.code`);
    if (Buffer.byteLength(req.code) > REQUEST_LIMITS.codeMaxBytes) throw new JudgeSettingsError(`${field}.code must be at most ${REQUEST_LIMITS.codeMaxBytes} UTF-8 encoded bytes`);
    return { compiler: req.compiler, code: req.code, files: [], convention: req.convention };
  }
  const files = req.files!;
  const seen = new Set<string>();
  let total = 0;
  const decoded = files.map((f, i) => {
    const where = `${field}.files.${i}`;
    if (!isPlainName(f.name)) throw new JudgeSettingsError(`${where}.name ${JSON.stringify(f.name)} must be a plain file name (no directories, not . or ..)`);
    if (seen.has(f.name)) throw new JudgeSettingsError(`${where}.name ${JSON.stringify(f.name)} is given twice`);
    seen.add(f.name);
    let content: Buffer;
    if (f.encoding === 'base64') {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(f.content) || f.content.length % 4 !== 0) throw new JudgeSettingsError(`${where}.content is not valid base64`);
      content = Buffer.from(f.content, 'base64');
    } else {
      checkText(f.content, `${where}.content`);
      content = Buffer.from(f.content, 'utf8');
    }
    total += content.length;
    return { name: f.name, content };
  });
  if (total > JUDGE_LIMITS.programFilesMaxBytes) throw new JudgeSettingsError(`${field}.files must hold at most ${JUDGE_LIMITS.programFilesMaxBytes} bytes together (they hold ${total})`);
  const mainName = req.main ?? files[0]!.name;
  const main = decoded.find((f) => f.name === mainName);
  if (!main) throw new JudgeSettingsError(`${field}.main ${JSON.stringify(mainName)} is not one of its files (${files.map((f) => f.name).join(', ')})`);
  const text = main.content.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(main.content) || text.includes('\u0000')) throw new JudgeSettingsError(`${field}: the main file ${mainName} must be UTF-8 text without NUL characters`);
  return {
    compiler: req.compiler,
    code: text,
    files: decoded.filter((f) => f !== main).map((f) => ({ name: f.name, content_base64: f.content.toString('base64') })),
    convention: req.convention,
  };
}

function checkText(text: string, field: string): void {
  if (text.includes('\u0000')) throw new JudgeSettingsError(`${field} must not contain NUL characters`);
}

/** A checker as sent, as it is kept (the default when none is sent). */
export function checkerSetting(req: CheckerRequest | undefined, field = 'checker'): CheckerSetting {
  if (!req) return { type: DEFAULT_CHECKER };
  if (req.type === 'program') return { type: 'program', ...programSource(req, field) };
  return req;
}

/** The compilers a judge setting needs (to check each is offered before anything runs). */
export function settingCompilers(s: Pick<JudgeSettings, 'checker' | 'interactor'>): string[] {
  return [...(s.checker.type === 'program' ? [s.checker.compiler] : []), ...(s.interactor ? [s.interactor.compiler] : [])];
}
