import { firstLine, type Dialect } from '../compilers/languages.js';
import { PROGRAM_LIMITS, VERIFY_LIMITS } from '../limits.js';
import type { CompilerForFile } from './compilers.js';
import { ProblemInputError, type DataSource } from './draft.js';
import { parsePackageYaml } from './yaml.js';
import type { ZipFileEntry } from './zip.js';

// A package's example submissions (submissions/<directory>/<file or directory>) and what
// each is expected to get, kept with the problem's version for verifying it
// (src/problems/verify.ts). What a submission must get is said, in the order a judge
// reads it:
// - its directory, by the format's defaults (accepted, wrong_answer, time_limit_exceeded,
//   run_time_error, rejected, brute_force; legacy's partially_accepted; DOMjudge's
//   compiler_error and no_output);
// - 2025-09's submissions/submissions.yaml: globs over the submissions' paths, each with
//   permitted and required verdict sets (a directory's own name replaces its defaults,
//   other globs add requirements) and use_for_time_limit;
// - DOMjudge's `@EXPECTED_RESULTS@: CORRECT, TIMELIMIT` line in the source, which names
//   the verdicts the submission's own (its first failing test's) may be, and replaces the
//   others.
// Verdicts are the format's: AC, WA, TLE, RTE, and CE (did not compile), JE (the
// validator failed). A submission's language is its main file's, by extension
// (src/compilers/languages.ts) in the package's dialect.

export const VERDICT_CODES = ['AC', 'WA', 'TLE', 'RTE', 'CE', 'JE'] as const;
export type VerdictCode = (typeof VERDICT_CODES)[number];

export interface Expectation {
  /** Where each requirement came from, as the package says it. */
  said: string[];
  /** Every test's verdict is in each of these sets (the format's `permitted`). */
  permitted: VerdictCode[][];
  /** Some test's verdict is in each of these sets (`required`). */
  required: VerdictCode[][];
  /** The submission's verdict (its first test not accepted, else AC) is one of these (DOMjudge). */
  final?: VerdictCode[];
  /** Accepted, but short of the full score (legacy partially_accepted). */
  partial?: boolean;
  /** Whether its slowest run bounds the time limit: from below (accepted), above (time_limit_exceeded), or not. */
  timeLimit: 'lower' | 'upper' | null;
}

export interface ExampleSubmission {
  /** Its path below submissions/. */
  path: string;
  /** The compiler that builds it here; null when none does (refusal says why). */
  compiler: string | null;
  refusal: string | null;
  main: string;
  files: { name: string; source: DataSource }[];
  expected: Expectation;
}

const bad = (message: string) => new ProblemInputError(message, 'invalid_package');

type Rule = { permitted?: VerdictCode[]; required?: VerdictCode[]; partial?: boolean; final?: VerdictCode[]; timeLimit?: Expectation['timeLimit'] };

/** The format's default directories (2025-09 "Default directories"; legacy's and DOMjudge's beside them). */
const DEFAULT_DIRECTORIES: Record<string, Rule> = {
  accepted: { permitted: ['AC'], timeLimit: 'lower' },
  rejected: { required: ['RTE', 'TLE', 'WA'] },
  wrong_answer: { permitted: ['AC', 'WA'], required: ['WA'] },
  time_limit_exceeded: { permitted: ['AC', 'TLE'], required: ['TLE'], timeLimit: 'upper' },
  run_time_error: { permitted: ['AC', 'RTE'], required: ['RTE'] },
  brute_force: { permitted: ['AC', 'RTE', 'TLE'], required: ['RTE', 'TLE'] },
  partially_accepted: { partial: true },
  compiler_error: { final: ['CE'] },
  compile_error: { final: ['CE'] },
  // DOMjudge's NO-OUTPUT is a wrong answer here: runbox does not tell an empty output apart.
  no_output: { final: ['WA'] },
};

/** DOMjudge's verdict names (@EXPECTED_RESULTS@) as the format's. */
const DOMJUDGE_VERDICTS: Record<string, VerdictCode> = {
  CORRECT: 'AC',
  'WRONG-ANSWER': 'WA',
  'NO-OUTPUT': 'WA',
  TIMELIMIT: 'TLE',
  'RUN-ERROR': 'RTE',
  'OUTPUT-LIMIT': 'RTE',
  'MEMORY-LIMIT': 'RTE',
  'COMPILER-ERROR': 'CE',
};

const MAIN_STEMS = ['main', 'solution', 'sol'];

/** The example submissions of a package's files (by path, rooted), or [] when it has none. */
export async function exampleSubmissions(files: Map<string, ZipFileEntry>, compilerFor: CompilerForFile, dialect: Dialect | undefined, yamlVersion: string): Promise<ExampleSubmission[]> {
  const units = new Map<string, { name: string; file: ZipFileEntry }[]>();
  for (const [path, file] of files) {
    if (!path.startsWith('submissions/')) continue;
    const parts = path.slice('submissions/'.length).split('/');
    if (parts.length < 2 || parts.some((p) => p === '')) continue;
    const unit = `${parts[0]}/${parts[1]}`;
    const list = units.get(unit) ?? [];
    list.push({ name: parts.length === 2 ? parts[1]! : parts.slice(2).join('/'), file });
    units.set(unit, list);
  }
  if (units.size === 0) return [];
  if (units.size > VERIFY_LIMITS.submissionsMax) throw bad(`submissions/ holds ${units.size} example submissions; a package may keep at most ${VERIFY_LIMITS.submissionsMax}`);
  const rules = await submissionsYaml(files);
  // 2025-09 counts wrong answers and run-time errors toward the limit's lower bound; problemtools, for the formats before it, accepted submissions alone.
  const modern = yamlVersion === '2025-09';
  const out: ExampleSubmission[] = [];
  for (const [path, list] of [...units.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    list.sort((a, b) => (a.name < b.name ? -1 : 1));
    out.push(await submissionOf(path, list, rules, compilerFor, dialect, modern));
  }
  return out;
}

async function submissionOf(
  path: string,
  list: { name: string; file: ZipFileEntry }[],
  rules: [string, Rule][],
  compilerFor: CompilerForFile,
  dialect: Dialect | undefined,
  modern: boolean,
): Promise<ExampleSubmission> {
  const directory = path.slice(0, path.indexOf('/'));
  const entrypoint = rules.filter(([glob]) => matches(glob, path)).map(([, r]) => (r as { entrypoint?: string }).entrypoint).find(Boolean);
  const total = list.reduce((n, f) => n + f.file.size, 0);
  const tooBig =
    list.length > VERIFY_LIMITS.submissionFilesMax
      ? `it has ${list.length} files; a submission may have at most ${VERIFY_LIMITS.submissionFilesMax}`
      : total > PROGRAM_LIMITS.filesMaxBytes
        ? `it holds ${total} bytes; a program may hold at most ${PROGRAM_LIMITS.filesMaxBytes}`
        : null;
  const firstLines = new Map<string, string>();
  if (!tooBig) for (const f of list) firstLines.set(f.name, firstLine(await f.file.read()));
  const languages = list.map((f) => ({ f, l: compilerFor({ name: f.name, firstLine: firstLines.get(f.name) ?? '' }, dialect) }));
  const sources = languages.filter((x) => x.l.compiler !== null);
  const stem = (name: string) => name.slice(name.lastIndexOf('/') + 1).replace(/\.[^.]*$/, '').toLowerCase();
  const main =
    (entrypoint && sources.find((x) => x.f.name === entrypoint)) ||
    (sources.length === 1 ? sources[0] : undefined) ||
    sources.find((x) => !x.f.name.includes('/') && MAIN_STEMS.includes(stem(x.f.name))) ||
    // Several files of one language (Java classes, C units): the one whose stem names the submission.
    (new Set(sources.map((x) => x.l.compiler)).size === 1 ? sources.find((x) => stem(x.f.name) === stem(path.slice(path.indexOf('/') + 1))) : undefined);
  let refusal = tooBig;
  if (!refusal && !main) {
    const reasons = languages.map((x) => (x.l.compiler === null ? `${x.f.name}: ${x.l.reason}` : null)).filter(Boolean);
    refusal = sources.length === 0 ? `no language offered here builds it (${reasons.join('; ')})` : `it has several sources (${sources.map((x) => x.f.name).join(', ')}); submissions.yaml's entrypoint names the main one`;
  }
  const mainFile = main ?? languages[0]!;
  // DOMjudge's @EXPECTED_RESULTS@ line: in the main file, or another file of a directory submission.
  const texts = tooBig ? [] : [await mainFile.f.file.read(), ...(await Promise.all(list.filter((f) => f !== mainFile.f).map((f) => f.file.read())))];
  const expected = await expectationOf(path, directory, rules, modern, texts);
  return {
    path,
    compiler: refusal ? null : (mainFile.l as { compiler: string }).compiler,
    refusal,
    main: mainFile.f.name,
    files: refusal ? [] : list.map((f) => ({ name: f.name, source: zipSource(f.file) })),
    expected,
  };
}

const zipSource = (f: ZipFileEntry): DataSource => ({ size: f.size, key: `crc32:${f.crc32}:${f.size}`, read: () => f.read() });

async function expectationOf(path: string, directory: string, rules: [string, Rule][], modern: boolean, sources: Buffer[]): Promise<Expectation> {
  const e: Expectation = { said: [], permitted: [], required: [], timeLimit: null };
  const add = (rule: Rule, said: string) => {
    if (rule.permitted) e.permitted.push(rule.permitted);
    if (rule.required) e.required.push(rule.required);
    if (rule.final) e.final = rule.final;
    if (rule.partial) e.partial = true;
    if (rule.timeLimit !== undefined) e.timeLimit = rule.timeLimit;
    e.said.push(said);
  };
  const own = rules.find(([glob]) => glob === directory);
  const defaults = DEFAULT_DIRECTORIES[directory];
  if (defaults || own) {
    // A directory named in submissions.yaml replaces the keys it gives of its defaults.
    const rule: Rule = { ...(defaults ?? {}), ...(own?.[1] ?? {}) };
    // 2025-09: wrong_answer and run_time_error submissions bound the time limit from below too.
    if (modern && (directory === 'wrong_answer' || directory === 'run_time_error') && rule.timeLimit === undefined) rule.timeLimit = 'lower';
    add(rule, own ? `submissions.yaml: ${directory}` : `${directory}/`);
  }
  for (const [glob, rule] of rules) if (glob !== directory && matches(glob, path)) add(rule, `submissions.yaml: ${glob}`);
  const line = sources.map((b) => /@EXPECTED_RESULTS@:?\s*([^\r\n]*)/.exec(b.toString('latin1'))).find((m) => m !== null) ?? null;
  if (line) {
    // The verdict names, up to whatever closes the comment (*/, -->).
    const names = line[1]!.split(/[\s,]+/).map((n) => n.toUpperCase()).filter((n) => n in DOMJUDGE_VERDICTS);
    const codes = names.map((n) => DOMJUDGE_VERDICTS[n]).filter((c): c is VerdictCode => c !== undefined);
    if (codes.length > 0) {
      // DOMjudge judges by this line alone.
      return { said: [`@EXPECTED_RESULTS@: ${names.join(', ')}`], permitted: [], required: [], final: [...new Set(codes)], timeLimit: codes.every((c) => c === 'AC') ? 'lower' : null };
    }
  }
  return e;
}

/** submissions/submissions.yaml's top-level globs and their requirements (group-level ones are not checked here). */
async function submissionsYaml(files: Map<string, ZipFileEntry>): Promise<[string, Rule][]> {
  const file = files.get('submissions/submissions.yaml');
  if (!file) return [];
  if (file.size > 64 * 1024) throw bad(`submissions/submissions.yaml is ${file.size} bytes; at most ${64 * 1024}`);
  const value = parsePackageYaml(await file.read(), 'submissions/submissions.yaml');
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object' || Array.isArray(value)) throw bad('submissions/submissions.yaml must be a mapping of globs');
  const codes = (v: unknown, where: string): VerdictCode[] => {
    const list = Array.isArray(v) ? v : [v];
    return list.map((c) => {
      const code = String(c).trim().toUpperCase();
      if (!(VERDICT_CODES as readonly string[]).includes(code) || code === 'CE' || code === 'JE') throw bad(`submissions/submissions.yaml: ${where} holds ${JSON.stringify(c)}; the verdicts are AC, WA, TLE and RTE`);
      return code as VerdictCode;
    });
  };
  return Object.entries(value as Record<string, unknown>).map(([glob, raw]) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw bad(`submissions/submissions.yaml: ${glob} must map to its requirements`);
    const r = raw as Record<string, unknown>;
    const rule: Rule & { entrypoint?: string } = {};
    if (r.permitted !== undefined) rule.permitted = codes(r.permitted, `${glob}.permitted`);
    if (r.required !== undefined) rule.required = codes(r.required, `${glob}.required`);
    const use = r.use_for_time_limit;
    if (use === false) rule.timeLimit = null;
    else if (use === 'lower') {
      rule.timeLimit = 'lower';
      rule.permitted ??= ['AC', 'WA', 'RTE'];
    } else if (use === 'upper') {
      rule.timeLimit = 'upper';
      rule.required ??= ['TLE'];
    }
    if (typeof r.entrypoint === 'string') rule.entrypoint = r.entrypoint;
    return [glob, rule];
  });
}

/** Brace alternatives expanded: {a,b}.py is a.py and b.py. */
function expandBraces(glob: string): string[] {
  const m = /\{([^{}]*)\}/.exec(glob);
  if (!m) return [glob];
  return m[1]!.split(',').flatMap((alt) => expandBraces(glob.slice(0, m.index) + alt + glob.slice(m.index + m[0].length)));
}

/** Whether a submissions.yaml glob matches the submission's path or a directory above it (* within a name only). */
export function matches(glob: string, path: string): boolean {
  const patterns = expandBraces(glob.replace(/\/+$/, '')).map(
    (g) => new RegExp(`^${g.split('*').map((part) => part.replace(/[.+?^$()|[\]\\]/g, '\\$&')).join('[^/]*')}$`),
  );
  const parts = path.split('/');
  return parts.some((_, i) => patterns.some((re) => re.test(parts.slice(0, i + 1).join('/'))));
}
