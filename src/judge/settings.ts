import Type, { type Static } from 'typebox';
import type { RunOptions } from '../db/schema.js';
import { ProgramFields } from '../program/fields.js';
import { asProgramText, decodeFiles, ProgramError, programOfFiles, type Program } from '../program/program.js';
import { DEFAULT_CHECKER, KATTIS_FLAGS, kattisOptions, ValidatorFlagsError, type BuiltinChecker } from './checkers/index.js';
import { JUDGE_LIMITS } from '../limits.js';
import { CONVENTIONS, type Convention } from './conventions.js';

// How a request (or a stored problem) asks to be judged: the comparison (a built-in
// checker or a checker program), an interactor, and whether to stop at the first test
// that fails. Declared once as TypeBox schemas (they validate requests and are
// published in the OpenAPI document) and normalised here into what a submission keeps.

const CompilerId = Type.Unsafe<string>({ type: 'string', description: 'Compiler identifier (see GET /api/compilers/).', 'x-runbox-compiler-id': true });

const Tolerance = (which: string) =>
  Type.Number({ minimum: 0, description: `${which} tolerance (default 1e-6; 0 turns it off). A number is accepted within either tolerance.` });

const CaseSensitive = Type.Optional(Type.Boolean({ description: 'false: letters compare without their case (ASCII A-Z as a-z). Default true.' }));

/** The flags of Kattis' default validator, as a package's validator_flags give them. */
export const ValidatorFlags = Type.Array(Type.String({ maxLength: JUDGE_LIMITS.validatorArgMaxBytes }), {
  maxItems: JUDGE_LIMITS.validatorArgsMax,
  description: `Kattis' default validator's flags, one a string: ${KATTIS_FLAGS.join(', ')} (the float ones followed by their tolerance). Default none.`,
});

/** One schema per built-in checker (a unit test holds them to BUILTIN_CHECKER_TYPES). */
export const builtinMembers = [
  Type.Object({ type: Type.Literal('lines') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('exact') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('tokens'), case_sensitive: CaseSensitive }, { additionalProperties: false }),
  Type.Object(
    { type: Type.Literal('floats'), absolute: Type.Optional(Tolerance('Absolute')), relative: Type.Optional(Tolerance('Relative')), case_sensitive: CaseSensitive },
    { additionalProperties: false },
  ),
  Type.Object({ type: Type.Literal('unordered_lines') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('kattis'), flags: Type.Optional(ValidatorFlags) }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('domjudge'), flags: Type.Optional(ValidatorFlags) }, { additionalProperties: false }),
] as const;

const programFields = {
  compiler: CompilerId,
  code: Type.Optional(Type.String({ description: 'The source, a single file (or give files).' })),
  files: ProgramFields.files,
  main: ProgramFields.main,
  convention: Type.Enum([...CONVENTIONS], { description: 'testlib: argv input output answer (an interactor: input output), exit 0/1/2/3/7, message on stderr. kattis: argv input answer feedback_dir, the output on stdin, exit 42/43, feedback_dir/judgemessage.txt.' }),
};

export const CheckerProgramSchema = Type.Object(
  { type: Type.Literal('program'), ...programFields },
  { additionalProperties: false, description: 'A checker program, compiled once per request and run after each test in a sandbox of its own.' },
);

export const CheckerSchema = Type.Union([...builtinMembers, CheckerProgramSchema], {
  description:
    'How an output is compared with the expected one: a built-in comparison, lines (the default: each line without trailing whitespace, trailing empty lines ignored), exact, tokens, floats (tokens; numbers within an absolute or relative tolerance), unordered_lines, kattis (Kattis\' default output validator with its flags), domjudge (DOMjudge\'s compare, the same with its float rules); or a checker program.',
});
export type CheckerRequest = Static<typeof CheckerSchema>;

export const InteractorSchema = Type.Object(programFields, {
  additionalProperties: false,
  description: "An interactor, run beside each test in its own sandbox: its stdout is the program's stdin and the program's stdout its stdin.",
});
export type InteractorRequest = Static<typeof InteractorSchema>;

/** A checker or interactor program as a submission (or a problem version) keeps it: its
 *  main file's text and its other files, as a request's program is kept (src/program). */
export interface ProgramSource {
  compiler: string;
  code: string;
  options: Pick<RunOptions, 'main' | 'files'>;
  convention: Convention;
  /** Arguments after its convention's (a Kattis package's validator_flags); a test's own follow them. */
  args?: string[];
  /** A multi-pass problem's validator (or interactor): the most passes it may ask for (src/judge/multi-pass.ts). */
  passes?: number;
}

export type CheckerSetting = BuiltinChecker | ({ type: 'program' } & ProgramSource);

/** What a judged submission keeps in run_options.judge. */
export interface JudgeSettings {
  checker: CheckerSetting;
  interactor: ProgramSource | null;
  stop_on_failure: boolean;
  /** A single judged run (input, no tests): its expected output. */
  expected_output?: string;
  /** A run of a stored problem: its tests, checker, interactor and limits are that version's. */
  problem?: { id: string; version: number };
}

export class JudgeSettingsError extends Error {}

/** A program as sent (code, or files and main) as it is kept, by a run request's program
 *  rules (file names, sizes, text); throws JudgeSettingsError naming what is wrong. */
export function programSource(req: InteractorRequest, field: string): ProgramSource {
  const source = (program: Program): ProgramSource => ({
    compiler: req.compiler,
    code: program.code,
    options: { ...(program.options.main !== undefined ? { main: program.options.main } : {}), ...(program.options.files ? { files: program.options.files } : {}) },
    convention: req.convention,
  });
  try {
    if ((req.code === undefined) === (req.files === undefined)) throw new ProgramError('code', 'give either code or files');
    if (req.code !== undefined) {
      if (req.main !== undefined) throw new ProgramError('main', 'names a file of files; with code there is one file');
      const text = asProgramText(Buffer.from(req.code, 'utf8'));
      if ('problem' in text) throw new ProgramError('code', text.problem);
      return source({ code: req.code, options: {} });
    }
    return source(programOfFiles(decodeFiles(req.files!), req.main));
  } catch (err) {
    if (err instanceof ProgramError) throw new JudgeSettingsError(`${field}.${err.field}: ${err.problem}`);
    throw err;
  }
}

/** A checker as sent, as it is kept (the default when none is sent). */
export function checkerSetting(req: CheckerRequest | undefined, field = 'checker'): CheckerSetting {
  if (!req) return { type: DEFAULT_CHECKER };
  if (req.type === 'program') return { type: 'program', ...programSource(req, field) };
  if (req.type === 'kattis' || req.type === 'domjudge') {
    try {
      kattisOptions(req.flags ?? [], req.type);
    } catch (err) {
      if (err instanceof ValidatorFlagsError) throw new JudgeSettingsError(`${field}.flags: ${err.message}`);
      throw err;
    }
  }
  return req;
}

/** The compilers a judge setting needs (to check each is offered before anything runs). */
export function settingCompilers(s: Pick<JudgeSettings, 'checker' | 'interactor'>): string[] {
  return [...(s.checker.type === 'program' ? [s.checker.compiler] : []), ...(s.interactor ? [s.interactor.compiler] : [])];
}
