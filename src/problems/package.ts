import { firstLine, type Dialect } from '../compilers/languages.js';
import { DEFAULT_CHECKER, kattisOptions, ValidatorFlagsError } from '../judge/checkers/index.js';
import type { Convention } from '../judge/conventions.js';
import type { CheckerSetting, ProgramSource } from '../judge/settings.js';
import { JUDGE_LIMITS, PROBLEM_LIMITS, PROBLEM_STATEMENT_LIMITS, PROGRAM_LIMITS } from '../limits.js';
import { ProgramError, programOfFiles, type DecodedFile, type Program } from '../program/program.js';
import { checkDraft, ProblemInputError, type DataSource, type DraftTest, type ProblemDraft, type ProblemLimits, type ProblemStatement } from './draft.js';
import type { CompilerForFile } from './compilers.js';
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
    return { draft: await readPackage(listing.files, options), close: listing.close };
  } catch (err) {
    listing.close();
    throw err;
  }
}

/** The package's files by path, without a single top-level directory they all share. */
function rooted(files: ZipFileEntry[]): Map<string, ZipFileEntry> {
  const tops = new Set(files.map((f) => (f.path.includes('/') ? f.path.slice(0, f.path.indexOf('/')) : '')));
  const top = tops.size === 1 ? [...tops][0]! : '';
  const strip = top !== '' && !ROOT_DIRECTORIES.includes(top) ? `${top}/` : '';
  return new Map(files.map((f) => [f.path.slice(strip.length), f]));
}

async function readPackage(entries: ZipFileEntry[], options: PackageOptions): Promise<ProblemDraft> {
  const files = rooted(entries);
  const yaml = await problemYaml(files);
  const kattis = [...files.keys()].some((p) => p.startsWith('data/'));
  const plain = [...files.keys()].some((p) => p.startsWith('tests/'));
  if (!kattis && !plain) {
    throw bad('the package has no tests: it holds data/sample/*.in + .ans and data/secret/*.in + .ans (the ICPC/Kattis layout), or tests/NAME.in + tests/NAME.out');
  }
  if (kattis && plain) throw bad('the package holds both data/ (the Kattis layout) and tests/ (the plain one): use one');
  const tests = kattis ? kattisTests(files) : plainTests(files);
  const dialect: Dialect | undefined = files.has('domjudge-problem.ini') ? 'domjudge' : kattis ? 'kattis' : undefined;
  const compilerFor = (file: { name: string; firstLine: string }) => options.compilerFor(file, dialect);

  const validatorDir = kattis ? validatorDirectory(files) : null;
  const flags = validatorFlags(yaml);
  // A DOMjudge package is judged by DOMjudge's compare, a Kattis one by Kattis' default validator.
  const defaultValidator = dialect === 'domjudge' ? 'domjudge' : 'kattis';
  let checker: CheckerSetting = kattis || flags.length > 0 ? { type: defaultValidator, flags } : { type: DEFAULT_CHECKER };
  let interactor: ProgramSource | null = null;
  if (kattis) {
    const { custom, interactive } = validationOf(yaml, validatorDir !== null);
    await domjudgeCompare(files, custom);
    if (custom) {
      if (!validatorDir) throw bad(`problem.yaml says validation: ${String(yaml.validation).trim()}, but the package has no output_validators/<name>/ directory`);
      // A custom validator's flags are its own: Kattis passes them on as they are.
      const program = { ...(await programFrom(files, validatorDir, compilerFor)), ...(flags.length > 0 ? { args: flags } : {}) };
      if (interactive) interactor = program;
      else checker = { type: 'program', ...program };
    }
    await groupArguments(files, tests);
  } else {
    if (hasDir(files, 'checker/')) checker = { type: 'program', ...(await programFrom(files, 'checker/', compilerFor)) };
    if (hasDir(files, 'interactor/')) interactor = await programFrom(files, 'interactor/', compilerFor);
  }
  checkValidatorArguments(checker, interactor, tests);
  return checkDraft({ name: problemName(yaml), tests, checker, interactor, limits: await limitsFrom(yaml, files), statement: await statementOf(files) });
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
async function statementOf(files: Map<string, ZipFileEntry>): Promise<ProblemStatement | undefined> {
  const ranked = [...files.entries()]
    .map(([path, file]) => ({ path, file, rank: statementRank(path) }))
    .filter((f): f is { path: string; file: ZipFileEntry; rank: number } => f.rank !== undefined)
    .sort((a, b) => a.rank - b.rank || a.path.localeCompare(b.path));
  const first = ranked[0];
  if (!first) return undefined;
  const max = PROBLEM_STATEMENT_LIMITS.maxBytes;
  if (first.file.size > max) throw bad(`${first.path} is ${first.file.size} bytes; a statement may have at most ${max}`);
  const text = (await first.file.read()).toString('utf8');
  return { format: /\.md$/i.test(first.path) ? 'markdown' : 'latex', text };
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

/** A small file of the package's own (problem.yaml, .timelimit), refused from its declared size before it is inflated. */
async function metadataFile(file: ZipFileEntry, name: string): Promise<Buffer> {
  const max = PROBLEM_LIMITS.metadataFileMaxBytes;
  if (file.size > max) throw bad(`${name} is ${file.size} bytes; the package's ${name} may have at most ${max}`);
  return file.read();
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

async function limitsFrom(yaml: Record<string, unknown>, files: Map<string, ZipFileEntry>): Promise<ProblemLimits> {
  const limits: ProblemLimits = {};
  const section = yaml.limits;
  if (section !== undefined && (typeof section !== 'object' || section === null || Array.isArray(section))) throw bad('problem.yaml: limits must be a mapping');
  const l = (section ?? {}) as Record<string, unknown>;
  const time = l.time_limit ?? l.time;
  if (time !== undefined) {
    if (typeof time !== 'number') throw bad('problem.yaml: limits.time_limit must be a number of seconds');
    limits.time = time;
  } else {
    const dotTime = files.get('.timelimit');
    if (dotTime) {
      const seconds = Number((await metadataFile(dotTime, '.timelimit')).toString('utf8').trim());
      if (!Number.isFinite(seconds)) throw bad('.timelimit must hold a number of seconds');
      limits.time = seconds;
    }
  }
  if (l.memory !== undefined) {
    if (typeof l.memory !== 'number' || !Number.isInteger(l.memory)) throw bad('problem.yaml: limits.memory must be a whole number of MiB');
    limits.memory = l.memory * 1024;
  }
  return limits;
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
function validationOf(yaml: Record<string, unknown>, hasValidator: boolean): { custom: boolean; interactive: boolean } {
  const version = String(yaml.problem_format_version ?? 'legacy').trim();
  if (version !== 'legacy' && version !== 'legacy-icpc') {
    const types = Array.isArray(yaml.type) ? yaml.type.map(String) : String(yaml.type ?? 'pass-fail').trim().split(/\s+/);
    const interactive = types.includes('interactive');
    if (interactive && !hasValidator) throw bad('problem.yaml says type: interactive, but the package has no output_validator/ directory');
    return { custom: hasValidator, interactive };
  }
  const validation = String(yaml.validation ?? 'default').trim();
  const words = validation.split(/\s+/);
  if (validation === 'default') return { custom: false, interactive: false };
  if (words[0] === 'custom' && words.slice(1).every((w) => w === 'interactive' || w === 'score') && new Set(words).size === words.length) {
    return { custom: true, interactive: words.includes('interactive') };
  }
  throw bad(`problem.yaml's validation must be default, custom or custom interactive, not ${JSON.stringify(validation)}`);
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

/** A YAML file of a package's test data (testdata.yaml, test_group.yaml, a test's NAME.yaml): a mapping, or null when absent. */
async function dataYaml(files: Map<string, ZipFileEntry>, path: string): Promise<Record<string, unknown> | null> {
  const file = files.get(path);
  if (!file) return null;
  // Bounded in size and depth before it is parsed, as problem.yaml is (src/problems/yaml.ts).
  const value = parsePackageYaml(await metadataFile(file, path), path);
  if (value === null || value === undefined) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw bad(`${path} must be a mapping`);
  return value as Record<string, unknown>;
}

/** The validator arguments a test data YAML file gives, or undefined when it gives none. */
function argumentsIn(config: Record<string, unknown>, path: string): string[] | undefined {
  // Legacy: output_validator_flags, a string (or {name, flags}), split as problemtools splits it.
  let flags = config.output_validator_flags;
  if (flags !== undefined) {
    if (flags !== null && typeof flags === 'object' && !Array.isArray(flags)) flags = (flags as Record<string, unknown>).flags ?? '';
    if (flags === null) return [];
    if (typeof flags !== 'string' && typeof flags !== 'number') throw bad(`${path}: output_validator_flags must be a string of space-separated flags`);
    return String(flags).trim().split(/\s+/).filter(Boolean);
  }
  // 2025-09: output_validator_args, a sequence of strings.
  const args = config.output_validator_args;
  if (args === undefined) return undefined;
  if (args === null) return [];
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string' || typeof a === 'number')) throw bad(`${path}: output_validator_args must be a sequence of strings`);
  return args.map(String);
}

/**
 * Each test's validator arguments: those of its own NAME.yaml (2025-09), else of the
 * nearest testdata.yaml or test_group.yaml from its directory up to data/ that gives any
 * (a group inherits its parent's).
 */
async function groupArguments(files: Map<string, ZipFileEntry>, tests: DraftTest[]): Promise<void> {
  const byDir = new Map<string, string[] | undefined>();
  const ofDir = async (dir: string): Promise<string[] | undefined> => {
    if (byDir.has(dir)) return byDir.get(dir);
    let found: string[] | undefined;
    for (const name of ['testdata.yaml', 'test_group.yaml']) {
      const config = await dataYaml(files, `${dir}/${name}`);
      if (config) found ??= argumentsIn(config, `${dir}/${name}`);
    }
    if (found === undefined && dir.includes('/')) found = await ofDir(dir.slice(0, dir.lastIndexOf('/')));
    byDir.set(dir, found);
    return found;
  };
  for (const t of tests) {
    const path = `data/${t.name}`;
    const own = await dataYaml(files, `${path}.yaml`);
    const args = (own && argumentsIn(own, `${path}.yaml`)) ?? (await ofDir(path.slice(0, path.lastIndexOf('/'))));
    if (args && args.length > 0) t.validatorArgs = args;
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

/** Tests of data/sample (samples first) and data/secret, each .in with its .ans, in path order. */
function kattisTests(files: Map<string, ZipFileEntry>): DraftTest[] {
  const tests: DraftTest[] = [];
  for (const group of ['sample', 'secret']) {
    const prefix = `data/${group}/`;
    const paths = [...files.keys()].filter((p) => p.startsWith(prefix)).sort();
    for (const path of paths.filter((p) => p.endsWith('.in'))) {
      const stem = path.slice(0, -3);
      const answer = files.get(`${stem}.ans`);
      if (!answer) throw bad(`${path} has no ${stem}.ans beside it`);
      tests.push({ name: stem.slice('data/'.length), input: source(files.get(path)!), answer: source(answer), weight: 1, sample: group === 'sample' });
    }
    for (const path of paths.filter((p) => p.endsWith('.ans'))) {
      if (!files.has(`${path.slice(0, -4)}.in`)) throw bad(`${path} has no ${path.slice(0, -4)}.in beside it`);
    }
  }
  if (tests.length === 0) throw bad('the package has no tests: data/sample/ and data/secret/ hold no .in files');
  return tests;
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

const source = (f: ZipFileEntry): DataSource => ({ size: f.size, key: `crc32:${f.crc32}:${f.size}`, read: () => f.read() });

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
