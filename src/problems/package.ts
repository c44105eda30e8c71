import { firstLine, type Dialect } from '../compilers/languages.js';
import { DEFAULT_CHECKER, kattisOptions, ValidatorFlagsError } from '../judge/checkers/index.js';
import type { Convention } from '../judge/conventions.js';
import { DEFAULT_VALIDATION_PASSES } from '../judge/multi-pass.js';
import type { CheckerSetting, ProgramSource } from '../judge/settings.js';
import { JUDGE_LIMITS, PROBLEM_LIMITS, PROBLEM_STATEMENT_LIMITS, PROGRAM_LIMITS } from '../limits.js';
import { ProgramError, programOfFiles, type DecodedFile, type Program } from '../program/program.js';
import { checkDraft, ProblemInputError, type DraftTest, type ProblemDraft, type ProblemStatement } from './draft.js';
import type { CompilerForFile } from './compilers.js';
import { exampleSubmissions } from './example-submissions.js';
import { readIncludes } from './include.js';
import { readInteractions } from './interaction.js';
import { metadataFile, source } from './package/files.js';
import { packageLimits } from './package/limits.js';
import { reportRoot, reportProblemYaml } from './package/metadata.js';
import { ReportBuilder } from './package/report.js';
import { readTestTree } from './package/tree.js';
import { timingOf } from './time-limit.js';
import { parsePackageYaml } from './yaml.js';
import { listZip, type ZipFileEntry } from './zip.js';

// A problem package (a zip) as a problem draft. Two layouts:
// - the ICPC/Kattis problem package (DOMjudge's too): problem.yaml (name,
//   limits.time_limit in seconds or a .timelimit file, limits.memory in MiB, validation:
//   default | custom | custom interactive, or from 2023-07 on a validator when there is
//   one and type: interactive; validator_flags), data/sample/**.in + .ans (samples),
//   data/secret/**.in + .ans, their groups' testdata.yaml output_validator_flags or
//   test_group.yaml output_validator_args, and output_validators/<name>/ (or
//   output_validator/) with the checker's or interactor's files. Without one, Kattis'
//   default validator judges (DOMjudge's compare for a package with
//   domjudge-problem.ini), with the flags; a validator of the package gets them as its
//   arguments after feedback_dir, as Kattis gives them;
// - a plain archive: tests/NAME.in + tests/NAME.out, with an optional problem.yaml and
//   checker/ or interactor/ directory.
// The Kattis layout's dialects (legacy, 2023-07-draft, 2025-09), its tree of test groups
// and the upload's report of what was read and ignored are in src/problems/package/
// (tree.ts, limits.ts, metadata.ts, report.ts).
// A package may sit in one top-level directory. A checker program's convention is
// testlib when it includes testlib.h, else Kattis'; its compiler is the newest offered
// one of its main file's language, by the language table of the recipes in the package's
// dialect (src/compilers/languages.ts): DOMjudge's where the package has its
// domjudge-problem.ini, else Kattis' in that layout, runbox's own in a plain archive.

export interface PackageOptions {
  /** The compiler identifier for a source file in the package's dialect (src/problems/compilers.ts). */
  compilerFor: CompilerForFile;
}

const bad = (message: string) => new ProblemInputError(message, 'invalid_package');

const HEADER = /\.(h|hh|hpp|hxx|inc)$/i;
const MAIN_NAMES = ['validator', 'checker', 'check', 'interactor', 'main'];
/** Directories of a package's root, in either layout. */
const ROOT_DIRECTORIES = ['data', 'tests', 'output_validators', 'output_validator', 'checker', 'interactor', 'problem_statement', 'statement'];

/** The package as a draft whose tests read from the zip as they are stored; close() once stored. */
export async function openPackage(zip: Buffer, options: PackageOptions): Promise<{ draft: ProblemDraft; close(): void }> {
  const listing = await listZip(zip);
  try {
    return { draft: await readPackage(listing.files, options, listing.escaping), close: listing.close };
  } catch (err) {
    listing.close();
    throw err;
  }
}

/** The package's files by path, without a single top-level directory they all share (and that prefix). */
function rooted(files: ZipFileEntry[], escaping: { path: string }[]): { files: Map<string, ZipFileEntry>; strip: string } {
  const tops = new Set([...files, ...escaping].map((f) => (f.path.includes('/') ? f.path.slice(0, f.path.indexOf('/')) : '')));
  const top = tops.size === 1 ? [...tops][0]! : '';
  const strip = top !== '' && !ROOT_DIRECTORIES.includes(top) ? `${top}/` : '';
  return { files: new Map(files.map((f) => [f.path.slice(strip.length), f])), strip };
}

/**
 * Links leaving the package are never followed: refused, unless they sit where the
 * package has nothing runbox reads (a statement's problem.pdf, as DOMjudge's examples
 * link theirs), which the report then lists.
 */
function escapingLinks(escaping: { path: string; target: string }[], strip: string): { key: string; reason: string }[] {
  return escaping.map(({ path, target }) => {
    const p = path.slice(strip.length);
    const top = p.includes('/') ? p.slice(0, p.indexOf('/')) : p;
    if (!UNREAD_TOPS.includes(top) && !/^problem(\.[A-Za-z-]+)?\.(pdf|html?|md|tex)$/.test(p)) throw bad(`the package's ${path} is a symbolic link to ${JSON.stringify(target)}, outside the package: refused`);
    return { key: p, reason: `a symbolic link to ${JSON.stringify(target)}, outside the package: not followed (a part runbox does not read)` };
  });
}

/** Top-level parts of a package runbox never reads (their reasons: src/problems/package/metadata.ts). */
const UNREAD_TOPS = ['problem_statement', 'statement', 'solution', 'attachments', 'submissions', 'generators', 'input_validators', 'input_format_validators', 'input_visualizer', 'output_visualizer'];

async function readPackage(entries: ZipFileEntry[], options: PackageOptions, escaping: { path: string; target: string }[] = []): Promise<ProblemDraft> {
  const { files, strip } = rooted(entries, escaping);
  const outside = escapingLinks(escaping, strip);
  const yaml = await problemYaml(files);
  const kattis = [...files.keys()].some((p) => p.startsWith('data/'));
  const plain = [...files.keys()].some((p) => p.startsWith('tests/'));
  if (!kattis && !plain) {
    throw bad('the package has no tests: it holds data/sample/*.in + .ans and data/secret/*.in + .ans (the ICPC/Kattis layout), or tests/NAME.in + tests/NAME.out');
  }
  if (kattis && plain) throw bad('the package holds both data/ (the Kattis layout) and tests/ (the plain one): use one');
  const dialect: Dialect | undefined = files.has('domjudge-problem.ini') ? 'domjudge' : kattis ? 'kattis' : undefined;
  const compilerFor = (file: { name: string; firstLine: string }) => options.compilerFor(file, dialect);
  if (!kattis) return plainPackage(files, yaml, compilerFor);

  const version = formatVersion(yaml);
  const types = typesOf(yaml, version);
  const report = new ReportBuilder(version, types);
  for (const o of outside) report.ignore(o.key, o.reason);
  const grading = yaml.grading;
  if (grading !== undefined && grading !== null && (typeof grading !== 'object' || Array.isArray(grading))) throw bad('problem.yaml: grading must be a mapping');
  const context = {
    format: version === '2025-09' ? ('2025-09' as const) : ('legacy' as const),
    scoring: types.includes('scoring'),
    problemGrading: (grading ?? {}) as Record<string, unknown>,
    constants: constantsOf(yaml),
    report,
    hasGrader: version !== '2025-09' && hasDir(files, 'graders/'),
  } as Parameters<typeof readTestTree>[1];
  const { tests, tree } = await readTestTree(files, context);
  // A custom grader (graders/), run sandboxed like a checker for the groups of grading: custom.
  if (context.usesGrader) {
    tree.grader = await programFrom(files, 'graders/', compilerFor);
    report.read('graders/');
  }
  const validatorDir = validatorDirectory(files);
  if (validatorDir) report.read(validatorDir);
  const flags = validatorFlags(yaml);
  // A DOMjudge package is judged by DOMjudge's compare, a Kattis one by Kattis' default validator.
  const defaultValidator = dialect === 'domjudge' ? 'domjudge' : 'kattis';
  let checker: CheckerSetting = { type: defaultValidator, flags };
  let interactor: ProgramSource | null = null;
  const draftExtras: Pick<ProblemDraft, 'submitAnswer'> = {};
  const { custom, interactive, multiPass, submitAnswer } = validationOf(yaml, validatorDir !== null);
  if (submitAnswer) draftExtras.submitAnswer = true;
  await domjudgeCompare(files, custom);
  if (custom) {
    if (!validatorDir) throw bad(`problem.yaml says validation: ${String(yaml.validation).trim()}, but the package has no output_validators/<name>/ directory`);
    // A custom validator's flags are its own: Kattis passes them on as they are.
    const program: ProgramSource = { ...(await programFrom(files, validatorDir, compilerFor)), ...(flags.length > 0 ? { args: flags } : {}) };
    if (multiPass) program.passes = validationPasses(yaml, program);
    if (interactive) interactor = program;
    else checker = { type: 'program', ...program };
  }
  await readInteractions(files, tests, { interactive, multiPass });
  checkValidatorArguments(checker, interactor, tests);
  const include = await readIncludes(files);
  if (include) report.read('include/');
  const { limits, timing } = await packageLimits(yaml, files, report);
  // How a verification derives the time limit when none is stated (src/problems/time-limit.ts).
  const verifyTiming = timingOf(timing, version === 'legacy', limits.time);
  const submissions = await exampleSubmissions(files, options.compilerFor, dialect, String(yaml.problem_format_version ?? 'legacy').trim());
  if (submissions.length > 0) report.read('submissions/');
  const statement = await statementOf(files);
  if (statement) report.read(statement.path);
  reportProblemYaml(yaml, report);
  reportRoot(files, report);
  return checkDraft({ name: problemName(yaml), tests, checker, interactor, limits, groups: tree, package: { report: report.done(), timing }, timing: verifyTiming, submissions, statement: statement?.statement, ...(include ? { include } : {}), ...draftExtras });
}

/** A plain archive: tests/NAME.in + NAME.out, an optional checker/ or interactor/. */
async function plainPackage(files: Map<string, ZipFileEntry>, yaml: Record<string, unknown>, compilerFor: (file: { name: string; firstLine: string }) => ReturnType<CompilerForFile>): Promise<ProblemDraft> {
  const tests = plainTests(files);
  const flags = validatorFlags(yaml);
  let checker: CheckerSetting = flags.length > 0 ? { type: 'kattis', flags } : { type: DEFAULT_CHECKER };
  let interactor: ProgramSource | null = null;
  if (hasDir(files, 'checker/')) checker = { type: 'program', ...(await programFrom(files, 'checker/', compilerFor)) };
  if (hasDir(files, 'interactor/')) interactor = await programFrom(files, 'interactor/', compilerFor);
  checkValidatorArguments(checker, interactor, tests);
  const report = new ReportBuilder('plain', []);
  const { limits } = await packageLimits(yaml, files, report);
  return checkDraft({ name: problemName(yaml), tests, checker, interactor, limits });
}

/** problem.yaml's problem_format_version: legacy when absent, else one runbox reads. */
function formatVersion(yaml: Record<string, unknown>): 'legacy' | '2023-07-draft' | '2025-09' {
  const version = String(yaml.problem_format_version ?? 'legacy').trim();
  if (version === 'legacy' || version === 'legacy-icpc') return 'legacy';
  if (version === '2023-07-draft' || version === '2023-07') return '2023-07-draft';
  if (version === '2025-09') return '2025-09';
  throw bad(`problem.yaml: problem_format_version ${JSON.stringify(version)} is not one runbox reads (legacy, 2023-07-draft, 2025-09)`);
}

const PROBLEM_TYPES = ['pass-fail', 'scoring', 'multi-pass', 'interactive', 'submit-answer'];

/** problem.yaml's type, as a list (a string of words, or a sequence); pass-fail when absent. */
function typesOf(yaml: Record<string, unknown>, version: string): string[] {
  const value = yaml.type;
  const types = value === undefined || value === null ? ['pass-fail'] : Array.isArray(value) ? value.map(String) : String(value).trim().split(/\s+/);
  for (const t of types) if (!PROBLEM_TYPES.includes(t) || (version === 'legacy' && t !== 'pass-fail' && t !== 'scoring')) throw bad(`problem.yaml: type ${JSON.stringify(t)} is not one of ${version === 'legacy' ? 'pass-fail, scoring' : PROBLEM_TYPES.join(', ')}`);
  if (types.includes('pass-fail') && types.includes('scoring')) throw bad('problem.yaml: type is pass-fail or scoring, not both');
  return types.includes('scoring') || types.includes('pass-fail') ? types : ['pass-fail', ...types];
}

/** 2025-09 constants: name to value (and name.variant to that variant), as {{name}} is replaced. */
function constantsOf(yaml: Record<string, unknown>): Map<string, string> {
  const out = new Map<string, string>();
  const value = yaml.constants;
  if (value === undefined || value === null) return out;
  if (typeof value !== 'object' || Array.isArray(value)) throw bad('problem.yaml: constants must be a mapping of names to values');
  for (const [name, c] of Object.entries(value as Record<string, unknown>)) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) throw bad(`problem.yaml: constants: ${JSON.stringify(name)} is not a name ([a-zA-Z_][a-zA-Z0-9_]*)`);
    const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number';
    if (scalar(c)) out.set(name, String(c));
    else if (c && typeof c === 'object' && !Array.isArray(c) && scalar((c as Record<string, unknown>).value)) {
      for (const [variant, v] of Object.entries(c as Record<string, unknown>)) if (scalar(v)) out.set(variant === 'value' ? name : `${name}.${variant}`, String(v));
    } else throw bad(`problem.yaml: constants: ${name} must be a number, a string, or a mapping with a value`);
  }
  return out;
}

/** Statement files in the order they are preferred: Markdown first (shown), then LaTeX (offered as a download); English before other languages. */
const STATEMENT_DIRS = ['problem_statement/', 'statement/'];
const statementRank = (path: string): number | undefined => {
  const dir = STATEMENT_DIRS.find((d) => path.startsWith(d));
  if (dir === undefined || path.slice(dir.length).includes('/')) return undefined;
  const name = path.slice(dir.length);
  const md = /\.md$/i.test(name);
  if (!md && !/\.tex$/i.test(name)) return undefined;
  const english = /^(problem(\.en)?|en|statement)\.(md|tex)$/i.test(name);
  return (md ? 0 : 10) + (english ? 0 : 1) + STATEMENT_DIRS.indexOf(dir) * 2;
};

/** The package's statement (problem_statement/problem.md, problem.en.tex, statement/…), refused past its bound from the declared size. */
async function statementOf(files: Map<string, ZipFileEntry>): Promise<{ path: string; statement: ProblemStatement } | undefined> {
  const ranked = [...files.entries()]
    .map(([path, file]) => ({ path, file, rank: statementRank(path) }))
    .filter((f): f is { path: string; file: ZipFileEntry; rank: number } => f.rank !== undefined)
    .sort((a, b) => a.rank - b.rank || a.path.localeCompare(b.path));
  const first = ranked[0];
  if (!first) return undefined;
  const max = PROBLEM_STATEMENT_LIMITS.maxBytes;
  if (first.file.size > max) throw bad(`${first.path} is ${first.file.size} bytes; a statement may have at most ${max}`);
  const text = (await first.file.read()).toString('utf8');
  return { path: first.path, statement: { format: /\.md$/i.test(first.path) ? 'markdown' : 'latex', text } };
}

const hasDir = (files: Map<string, ZipFileEntry>, dir: string) => [...files.keys()].some((p) => p.startsWith(dir));

async function problemYaml(files: Map<string, ZipFileEntry>): Promise<Record<string, unknown>> {
  const file = files.get('problem.yaml');
  if (!file) return {};
  const value = parsePackageYaml(await metadataFile(file, 'problem.yaml'), 'problem.yaml');
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw bad('problem.yaml must be a mapping');
  return value as Record<string, unknown>;
}

function problemName(yaml: Record<string, unknown>): string {
  const name = yaml.name;
  if (typeof name === 'string' && name.trim() !== '') return name.trim();
  // Kattis names by language: {en: "...", sv: "..."}
  if (name && typeof name === 'object') {
    const byLanguage = name as Record<string, unknown>;
    const first = typeof byLanguage.en === 'string' ? byLanguage.en : Object.values(byLanguage).find((v) => typeof v === 'string');
    if (typeof first === 'string' && first.trim() !== '') return first.trim();
  }
  return 'Untitled problem';
}

/** problem.yaml's validator_flags (the legacy format's; later ones give arguments per test group only). */
function validatorFlags(yaml: Record<string, unknown>): string[] {
  const flags = yaml.validator_flags;
  if (flags === undefined || flags === null) return [];
  if (typeof flags !== 'string' && typeof flags !== 'number') throw bad('problem.yaml: validator_flags must be a string of space-separated flags');
  return String(flags).trim().split(/\s+/).filter(Boolean);
}

/**
 * Whether a Kattis package's output is judged by its own validator, and interactively:
 * the legacy format says so in `validation` (default, custom, custom interactive, with
 * score); from 2023-07 on a package has a validator when output_validator/ holds one,
 * and `type` says interactive.
 */
function validationOf(yaml: Record<string, unknown>, hasValidator: boolean): { custom: boolean; interactive: boolean; multiPass: boolean; submitAnswer: boolean } {
  const version = String(yaml.problem_format_version ?? 'legacy').trim();
  if (version !== 'legacy' && version !== 'legacy-icpc') {
    const types = Array.isArray(yaml.type) ? yaml.type.map(String) : String(yaml.type ?? 'pass-fail').trim().split(/\s+/);
    const interactive = types.includes('interactive');
    const multiPass = types.includes('multi-pass');
    const submitAnswer = types.includes('submit-answer');
    for (const [is, word] of [[interactive, 'interactive'], [multiPass, 'multi-pass']] as const) {
      if (is && !hasValidator) throw bad(`problem.yaml says type: ${word}, but the package has no output_validator/ directory`);
      // The format's table of types: submit-answer goes with neither.
      if (is && submitAnswer) throw bad(`problem.yaml: type submit-answer cannot be ${word} too (a submission is answers, not a program)`);
    }
    return { custom: hasValidator, interactive, multiPass, submitAnswer };
  }
  const validation = String(yaml.validation ?? 'default').trim();
  const words = validation.split(/\s+/);
  if (validation === 'default') return { custom: false, interactive: false, multiPass: false, submitAnswer: false };
  if (words[0] === 'custom' && words.slice(1).every((w) => w === 'interactive' || w === 'score' || w === 'multi-pass') && new Set(words).size === words.length) {
    return { custom: true, interactive: words.includes('interactive'), multiPass: words.includes('multi-pass'), submitAnswer: false };
  }
  throw bad(`problem.yaml's validation must be default or custom, then any of interactive, score and multi-pass, not ${JSON.stringify(validation)}`);
}

/** A multi-pass problem's limits.validation_passes (default 2), within the service's bound; its validator a Kattis one (it writes nextpass.in into feedback_dir). */
function validationPasses(yaml: Record<string, unknown>, validator: ProgramSource): number {
  if (validator.convention !== 'kattis') throw bad("a multi-pass problem's validator writes nextpass.in into its feedback directory (the Kattis convention); this one includes testlib.h");
  const limits = yaml.limits && typeof yaml.limits === 'object' && !Array.isArray(yaml.limits) ? (yaml.limits as Record<string, unknown>) : {};
  const passes = limits.validation_passes ?? DEFAULT_VALIDATION_PASSES;
  const max = JUDGE_LIMITS.validationPassesMax;
  if (typeof passes !== 'number' || !Number.isInteger(passes) || passes < 2) throw bad('problem.yaml: limits.validation_passes must be a whole number of at least 2');
  if (passes > max) throw bad(`problem.yaml: limits.validation_passes is ${passes}; runbox runs at most ${max} passes of a test`);
  return passes;
}

/**
 * A DOMjudge package (domjudge-problem.ini) is judged by DOMjudge's default compare: one
 * whose special_compare names another of the DOMjudge server's executables cannot be
 * judged here unless it brings its validator.
 */
async function domjudgeCompare(files: Map<string, ZipFileEntry>, custom: boolean): Promise<void> {
  const ini = files.get('domjudge-problem.ini');
  if (!ini || custom) return;
  if (ini.size > 64 * 1024) throw bad('domjudge-problem.ini is larger than 64 KiB');
  const line = /^\s*special_compare\s*=\s*['"]?([^'"\r\n]*?)['"]?\s*$/m.exec((await ini.read()).toString('utf8'));
  const compare = line?.[1]?.trim() ?? '';
  if (compare !== '' && compare !== 'compare') {
    throw bad(`domjudge-problem.ini's special_compare names ${JSON.stringify(compare)}, an executable of the DOMjudge server that is not in the package: include it as output_validators/<name>/ with validation: custom in problem.yaml`);
  }
}

/** Validator arguments within bounds, and flags the default validator knows (problemtools' check runs it: a usage error is a judge error there). */
function checkValidatorArguments(checker: CheckerSetting, interactor: ProgramSource | null, tests: DraftTest[]): void {
  const builtin = checker.type === 'kattis' || checker.type === 'domjudge';
  const own = builtin ? (checker.flags ?? []) : ((interactor ?? (checker.type === 'program' ? checker : null))?.args ?? []);
  for (const t of [{ name: 'problem.yaml', validatorArgs: [] as string[] }, ...tests]) {
    const args = [...own, ...(t.validatorArgs ?? [])];
    const where = t.name === 'problem.yaml' ? 'problem.yaml' : `test ${t.name}`;
    if (args.length > JUDGE_LIMITS.validatorArgsMax) throw bad(`${where}: ${args.length} validator arguments; at most ${JUDGE_LIMITS.validatorArgsMax}`);
    const long = args.find((a) => Buffer.byteLength(a) > JUDGE_LIMITS.validatorArgMaxBytes);
    if (long !== undefined) throw bad(`${where}: a validator argument is longer than ${JUDGE_LIMITS.validatorArgMaxBytes} bytes`);
    if (builtin && !interactor) {
      try {
        kattisOptions(args, checker.type);
      } catch (err) {
        if (err instanceof ValidatorFlagsError) throw bad(`${where}: ${err.message}`);
        throw err;
      }
    }
  }
}

function plainTests(files: Map<string, ZipFileEntry>): DraftTest[] {
  const paths = [...files.keys()].filter((p) => p.startsWith('tests/')).sort();
  const tests: DraftTest[] = [];
  for (const path of paths.filter((p) => p.endsWith('.in'))) {
    const stem = path.slice(0, -3);
    const answer = files.get(`${stem}.out`) ?? files.get(`${stem}.ans`);
    if (!answer) throw bad(`${path} has no ${stem}.out beside it`);
    tests.push({ name: stem.slice('tests/'.length), input: source(files.get(path)!), answer: source(answer), weight: 1, sample: false });
  }
  for (const path of paths.filter((p) => p.endsWith('.out'))) {
    if (!files.has(`${path.slice(0, -4)}.in`)) throw bad(`${path} has no ${path.slice(0, -4)}.in beside it`);
  }
  if (tests.length === 0) throw bad('the package has no tests: tests/ holds no .in files');
  return tests;
}


/** output_validators/<name>/ (the one directory there) or output_validator/. */
function validatorDirectory(files: Map<string, ZipFileEntry>): string | null {
  if (hasDir(files, 'output_validator/')) return 'output_validator/';
  const names = new Set([...files.keys()].filter((p) => p.startsWith('output_validators/')).map((p) => p.split('/')[1]!));
  if (names.size > 1) throw bad(`output_validators/ holds ${names.size} validators (${[...names].join(', ')}); runbox takes one`);
  return names.size === 1 ? `output_validators/${[...names][0]}/` : null;
}

/** The program in a directory of the package: its files, its main file, compiler and convention. */
async function programFrom(files: Map<string, ZipFileEntry>, dir: string, compilerFor: (file: { name: string; firstLine: string }) => ReturnType<CompilerForFile>): Promise<ProgramSource> {
  const entries = [...files.entries()].filter(([p]) => p.startsWith(dir)).map(([p, f]) => ({ name: p.slice(dir.length), file: f }));
  if (entries.length > PROGRAM_LIMITS.filesMax) throw bad(`${dir} holds ${entries.length} files; at most ${PROGRAM_LIMITS.filesMax}`);
  const total = entries.reduce((n, e) => n + e.file.size, 0);
  if (total > PROGRAM_LIMITS.filesMaxBytes) throw bad(`${dir} holds ${total} bytes; a checker's files may hold at most ${PROGRAM_LIMITS.filesMaxBytes}`);
  const read = await Promise.all(entries.map(async (e) => ({ name: e.name, content: await e.file.read() })));
  const languages = read.map((e) => (HEADER.test(e.name) ? null : compilerFor({ name: e.name, firstLine: firstLine(e.content) })));
  const sources = read.filter((_, i) => languages[i]?.compiler);
  const stem = (name: string) => name.slice(name.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '').toLowerCase();
  const main = sources.length === 1 ? sources[0] : sources.find((e) => !e.name.includes('/') && MAIN_NAMES.includes(stem(e.name)));
  if (!main) {
    const refused = read.map((e, i) => ({ e, l: languages[i] })).filter(({ l }) => l && l.compiler === null).map(({ e, l }) => `${e.name}: ${(l as { reason: string }).reason}`);
    throw bad(
      sources.length === 0
        ? `${dir} holds no source file in a language offered here (${read.map((e) => e.name).join(', ') || 'nothing'})${refused.length > 0 ? `: ${refused.join('; ')}` : ''}`
        : `${dir} holds several sources (${sources.map((e) => e.name).join(', ')}); name the main one validator, checker, interactor or main`,
    );
  }
  const decoded: DecodedFile[] = read.map((e) => ({ name: e.name, content: e.content, text: e === main }));
  let program: Program;
  try {
    program = programOfFiles(decoded, main.name);
  } catch (err) {
    if (err instanceof ProgramError) throw bad(`${dir}: ${err.field.replace(/^files\.(\d+)/, (_, i: string) => decoded[Number(i)]!.name)}: ${err.problem}`);
    throw err;
  }
  const usesTestlib = decoded.some((f) => f.name === 'testlib.h' || f.name.endsWith('/testlib.h')) || /#\s*include\s*[<"]testlib\.h[>"]/.test(program.code);
  const convention: Convention = usesTestlib ? 'testlib' : 'kattis';
  return { compiler: languages[read.indexOf(main)]!.compiler!, code: program.code, options: program.options, convention };
}
