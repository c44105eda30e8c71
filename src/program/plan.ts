import type { CompilerEntry } from '../compilers/catalogue.js';
import { languageExtensions } from '../compilers/languages.js';
import type { RunOptions, SubmissionMode } from '../db/schema.js';
import type { StageFile } from '../sandbox/spec.js';
import { declaredPackage, findEntry } from './entry-point.js';
import { extensionOf, OUT_DIR } from './paths.js';
import { codeOnly, placeSource, sourceText } from './source-file.js';

// A stored program (code and its run options) with its compiler's recipe, as the
// stages that build and run it: the files each stage starts with, their argv, the
// directories made empty and the files brought back. The recipe says it all in data
// (src/compilers/recipe.ts); nothing here knows a language:
//   {file}     the main file's path             {main}     it without its extension
//   {dir}      its directory ('.' at the root)  {stem}     its name without extension
//   {Stem}     {stem} as a class name (Kotlin's MainKt: first letter capitalised,
//              other characters than letters, digits and _ as _)
//   {package}  the package the main file declares (`package a.b;` in Java, Kotlin,
//              Scala), with a dot after it; '' when it declares none
//   {entry}    the class that holds the entry point, as the recipe's `entry` finds it
//              in the sources (src/program/entry-point.ts)
// and, each as a whole argv entry standing for several:
//   {sources}  every file whose extension is one of the recipe's `sources`, and the
//              main file, sorted by name     {others}   the same without the main file
//   {options}  the request's compiler options, checked against the recipe's forms
// A file's name never reaches a tool as an option: an argv entry that starts with an
// expansion (`{file}`, `{package}{stem}`, each name of `{sources}` and `{others}`) and
// would start with anything but a letter, a digit or _ gets ./ before it (`-B.c` is
// `./-B.c`, never gcc's -B). Everything else is the name as the user gave it, so
// diagnostics and argv[0] read as before.

const SOURCE_MODE = 0o644;
/** Entries that stand for several argv entries. */
const LIST_TOKENS = ['{sources}', '{others}', '{options}'] as const;
const SCALAR_TOKEN = /\{(file|main|dir|stem|Stem|package|entry)\}/g;
const ENTRY_TOKEN = /\{(package|scope|stem|Stem)\}/g;

export interface StagePlan {
  argv: string[];
  files: StageFile[];
  /** Directories made (empty) before the program starts. */
  dirs: string[];
  /** Workspace paths brought back when the stage ends; one ending in / stands for every file below it. */
  collect: string[];
}

export interface ProgramPlan {
  /** The main file's path in the workspace. */
  main: string;
  /** Every file of the program, the main one first. */
  files: StageFile[];
  /** Absent: the compiler has no compile stage, or the recipe's compileOnlyWith file is not in the program. */
  compile?: StagePlan & { /** Named artifacts the run stage cannot do without. */ required: string[] };
  /** The run stage, before the compile stage's artifacts are added to its files. */
  run: StagePlan;
  /** Why the program cannot run though it may compile: no source has the entry point the recipe's `entry` looks for. */
  problem?: string;
}

export interface StoredProgram {
  code: string;
  run_options?: RunOptions | null;
}

type Recipe = Pick<CompilerEntry, 'language' | 'version' | 'source' | 'sourceFromPublicClass' | 'skipsFirstLine' | 'compile' | 'sources' | 'compileOnlyWith' | 'artifacts' | 'run' | 'check' | 'extensions' | 'dialects' | 'shebang' | 'entry'>;

/**
 * Whether the program's recipe check (a syntax check, for a language with no compile
 * stage) runs as its compile stage: in a judged run, as judges check an interpreted
 * program before its first test, except Judge0's, whose clients expect a syntax error to
 * be the run's (Runtime Error with the interpreter's message), as it is in a plain run;
 * and wherever the run asks for it (syntax_check: the Jobe route, as Jobe compiles
 * Python 3 and PHP before it runs them).
 */
export function syntaxChecked(entry: Pick<CompilerEntry, 'compile' | 'check'>, options: RunOptions | null | undefined, mode: SubmissionMode | undefined): boolean {
  return entry.check !== undefined && entry.compile === undefined && ((options?.judge !== undefined && mode !== 'judge0') || options?.syntax_check === true);
}

export function planProgram(entry: Recipe, job: StoredProgram, how: { syntaxCheck?: boolean } = {}): ProgramPlan {
  const options = job.run_options ?? {};
  const main = options.main ?? placeSource(entry, job.code).fileName;
  const mainFile: StageFile = { name: main, mode: SOURCE_MODE, content: Buffer.from(sourceText(entry, job.code), 'utf8') };
  // A file named like the main one cannot replace it.
  const others = (options.files ?? [])
    .filter((f) => f.name !== main)
    .map((f): StageFile => ({ name: f.name, mode: SOURCE_MODE, content: Buffer.from(f.content_base64, 'base64') }));
  const files = [mainFile, ...others];
  const names = new Set(files.map((f) => f.name));

  const extensions = new Set(entry.sources ?? []);
  const sources = files.map((f) => f.name).filter((name) => name === main || extensions.has(extensionOf(name))).sort(byteOrder);
  const stemOf = (name: string) => {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return extensionOf(base) === '' ? base : base.slice(0, -extensionOf(base).length);
  };
  const stem = stemOf(main);
  const className = (s: string) => (s.charAt(0).toUpperCase() + s.slice(1)).replace(/[^A-Za-z0-9_]/g, '_');
  // The entry point: in the main file, else the first other file of the language that has one.
  const language = new Set(languageExtensions(entry));
  const found = entry.entry
    ? findEntry(entry.entry, files.filter((f) => f.name === main || language.has(extensionOf(f.name))).map((f) => ({ name: f.name, code: f.content.toString('utf8') })))
    : undefined;
  const entryName = (): string => {
    // The recipe's own words (a Prolog goal) as they are; a name from a file is never an option.
    if (entry.entry && !found && entry.entry.otherwise !== undefined) return entry.entry.otherwise;
    if (!entry.entry || !found) return notAnOption(`${scalars.package!()}${stem}`);
    const names: Record<string, string> = { package: found.package === '' ? '' : `${found.package}.`, scope: found.scopes.join('$'), stem: stemOf(found.file), Stem: className(stemOf(found.file)) };
    return entry.entry.name.replace(ENTRY_TOKEN, (_, t: string) => names[t]!);
  };
  const scalars: Record<string, () => string> = {
    file: () => main,
    main: () => main.slice(0, main.length - extensionOf(main).length),
    dir: () => (main.includes('/') ? main.slice(0, main.lastIndexOf('/')) : '.'),
    stem: () => stem,
    Stem: () => className(stem),
    package: () => {
      const declared = declaredPackage(codeOnly(job.code));
      return declared === '' ? '' : `${declared}.`;
    },
    entry: entryName,
  };
  const lists: Record<(typeof LIST_TOKENS)[number], string[]> = {
    '{sources}': sources,
    '{others}': sources.filter((s) => s !== main),
    '{options}': options.compiler_options ?? [],
  };
  const fill = (arg: string): string => arg.replace(SCALAR_TOKEN, (_, t: string) => scalars[t]!());
  const expand = (argv: readonly string[]): string[] =>
    argv.flatMap((arg) => {
      if (arg === '{options}') return lists[arg];
      if ((LIST_TOKENS as readonly string[]).includes(arg)) return lists[arg as (typeof LIST_TOKENS)[number]].map(notAnOption);
      // {entry} is the recipe's words or a class the sources declare (an identifier), made safe where it is a file's name.
      return [arg.startsWith('{') && !arg.startsWith('{entry}') ? notAnOption(fill(arg)) : fill(arg)];
    });

  const plan: ProgramPlan = {
    main,
    files,
    run: {
      argv: [...expand(entry.run), ...(options.args ?? [])],
      files,
      dirs: [OUT_DIR],
      collect: options.return_files ? [`${OUT_DIR}/`] : [],
    },
  };
  if (entry.entry?.missing !== undefined && !found) plan.problem = entry.entry.missing;
  if (how.syntaxCheck && entry.check) {
    plan.compile = { argv: expand(entry.check), files, dirs: [], collect: [], required: [] };
  } else if (entry.compile && (entry.compileOnlyWith === undefined || names.has(entry.compileOnlyWith))) {
    // Workspace paths, not argv: collected as they are.
    const artifacts = (entry.artifacts ?? []).map((a) => (a === './' ? a : fill(a)));
    plan.compile = {
      argv: expand(entry.compile),
      files,
      dirs: [],
      collect: artifacts,
      required: artifacts.filter((a) => !a.endsWith('/')),
    };
  }
  return plan;
}

/** An argv entry made from a name, as no tool reads it as an option: `-x.c` as `./-x.c` (`.` stays). */
export function notAnOption(arg: string): string {
  return arg === '.' || /^[A-Za-z0-9_/]/.test(arg) ? arg : `./${arg}`;
}

/** Byte order of ASCII names (what a sorted directory listing shows), the same on every host. */
const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
