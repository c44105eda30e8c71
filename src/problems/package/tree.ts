import type { GroupItem, GroupNode, GroupTree, LegacyRules, ModernRules } from '../../judge/groups.js';
import type { DraftTest } from '../draft.js';
import { source, yamlMapping, type PackageFiles } from './files.js';
import { refuse, type ReportBuilder } from './report.js';

// The tests of a Kattis package's data/ as the tree of groups its judge reads: every
// directory a group (legacy and 2023-07-draft, testdata.yaml's settings inherited down
// the tree, as problemtools reads them), or sample, secret and the test_group.yaml
// groups of secret (2025-09); cases and groups in lexicographic order of their names
// (the stored tests keep that order). Each test's output validator arguments come with
// it: testdata.yaml's output_validator_flags, or test_group.yaml's and its own NAME.yaml's
// output_validator_args.

export interface TreeContext {
  format: 'legacy' | '2025-09';
  scoring: boolean;
  /** problem.yaml's legacy grading: mapping (its on_reject, accept_score, reject_score, range override every group's). */
  problemGrading: Record<string, unknown>;
  /** 2025-09 constants, substituted as {{name}} in test_group.yaml. */
  constants: Map<string, string>;
  report: ReportBuilder;
  /** The package has graders/ (a custom grader); set usesGrader when a group grades by it. */
  hasGrader: boolean;
  usesGrader?: boolean;
}

interface Dir {
  dirs: Map<string, Dir>;
  files: Set<string>;
}

function directoryTree(files: PackageFiles, prefix: string): Dir {
  const root: Dir = { dirs: new Map(), files: new Set() };
  for (const path of files.keys()) {
    if (!path.startsWith(prefix)) continue;
    const parts = path.slice(prefix.length).split('/');
    let dir = root;
    for (const part of parts.slice(0, -1)) {
      let next = dir.dirs.get(part);
      if (!next) dir.dirs.set(part, (next = { dirs: new Map(), files: new Set() }));
      dir = next;
    }
    dir.files.add(parts.at(-1)!);
  }
  return root;
}

/**
 * A directory's tests and subdirectories in problemtools' order: sorted by file name (a
 * test by its .ans). A test is declared by its .in, which needs its .ans; an .ans alone
 * is no test (problemtools and DOMjudge load tests by their .in), and is reported.
 */
function entries(dir: Dir, path: string, report: ReportBuilder): ({ test: string } | { dir: string })[] {
  for (const f of dir.files) {
    if (f.endsWith('.in') && !dir.files.has(`${f.slice(0, -3)}.ans`)) throw refuse(`${path}/${f} has no ${path}/${f.slice(0, -3)}.ans beside it`);
    if (f.endsWith('.ans') && !dir.files.has(`${f.slice(0, -4)}.in`)) report.ignore(`${path}/${f}`, `an answer without ${f.slice(0, -4)}.in: not a test`);
  }
  const list: { key: string; item: { test: string } | { dir: string } }[] = [];
  for (const f of dir.files) if (f.endsWith('.ans') && dir.files.has(`${f.slice(0, -4)}.in`)) list.push({ key: f, item: { test: f.slice(0, -4) } });
  for (const d of dir.dirs.keys()) list.push({ key: d, item: { dir: d } });
  return list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((e) => e.item);
}

const splitFlags = (value: unknown, where: string): string[] => {
  if (value === null || value === undefined) return [];
  if (typeof value !== 'string' && typeof value !== 'number') throw refuse(`${where} must be a string of space-separated words`);
  return String(value).trim().split(/\s+/).filter(Boolean);
};

const numberOf = (value: unknown, where: string): number => {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw refuse(`${where} must be a number`);
  return n;
};

function rangeOf(value: unknown, where: string): [number | null, number | null] {
  const words = splitFlags(value, where);
  const bound = (w: string) => (/^[+-]?inf(inity)?$/i.test(w) ? null : Number(w));
  const pair = words.map(bound);
  if (pair.length !== 2 || pair.some((p) => p !== null && !Number.isFinite(p))) throw refuse(`${where} must be two numbers (the least and the most score), not ${JSON.stringify(value)}`);
  const [lo, hi] = pair as [number | null, number | null];
  if (lo !== null && hi !== null && lo > hi) throw refuse(`${where}: the least score ${lo} is more than the most ${hi}`);
  return [lo, hi];
}

const LEGACY_IGNORED: Record<string, string> = {
  input_validator_flags: 'input validators are not run here (the test data is taken as valid)',
};

/** The legacy (and 2023-07-draft) tree: every directory of data/ a group, testdata.yaml inherited down. */
async function legacyTree(files: PackageFiles, ctx: TreeContext, tests: DraftTest[]): Promise<GroupNode> {
  const { report } = ctx;
  const defaults: Record<string, unknown> = { on_reject: 'break', grading: 'default', grader_flags: '', accept_score: 1, reject_score: 0, range: '-inf +inf' };
  const stated = { on_reject: false };
  const walk = async (dir: Dir, path: string, inherited: Record<string, unknown>, onRejectStated: boolean): Promise<GroupNode> => {
    const file = `${path}/testdata.yaml`;
    if (dir.files.has('test_group.yaml')) throw refuse(`${path}/test_group.yaml is a 2025-09 file, but problem.yaml's problem_format_version is ${ctx.report.format}: say problem_format_version: 2025-09, or use testdata.yaml`);
    for (const f of dir.files) if (f.endsWith('.yaml') && f !== 'testdata.yaml') report.ignore(`${path}/${f}`, `a test case's own configuration is 2025-09's; this package is ${ctx.report.format}`);
    const own = (await yamlMapping(files, file)) ?? {};
    if (files.has(file)) report.read(file);
    for (const key of Object.keys(own)) {
      if (key in defaults || key === 'output_validator_flags') report.read(`${file}: ${key}`);
      else if (key in LEGACY_IGNORED) report.ignore(`${file}: ${key}`, LEGACY_IGNORED[key]!);
      else report.ignore(`${file}: ${key}`, 'not a key of testdata.yaml');
    }
    const config = { ...inherited, ...own };
    // problem.yaml's legacy grading: overrides every group's, as problemtools applies it.
    const g = ctx.problemGrading;
    for (const key of ['accept_score', 'reject_score', 'range']) if (g[key] !== undefined && g[key] !== null) config[key] = g[key];
    if (g.on_reject === 'first_error') config.on_reject = 'break';
    if (g.on_reject === 'grade') config.on_reject = 'continue';
    const statedHere = onRejectStated || own.on_reject !== undefined || g.on_reject !== undefined;
    stated.on_reject ||= statedHere;
    const full = { ...defaults, ...config };
    const onReject = String(full.on_reject);
    if (onReject !== 'break' && onReject !== 'continue') throw refuse(`${file}: on_reject must be break or continue, not ${JSON.stringify(full.on_reject)}`);
    const grading = String(full.grading);
    if (grading === 'custom' && !ctx.hasGrader) throw refuse(`${file}: grading: custom, but the package has no grader program in graders/`);
    if (grading !== 'default' && grading !== 'custom') throw refuse(`${file}: grading must be default or custom, not ${JSON.stringify(full.grading)}`);
    if (grading === 'custom') ctx.usesGrader = true;
    const rules: LegacyRules = {
      on_reject: onReject,
      on_reject_stated: statedHere,
      grading,
      grader_flags: splitFlags(full.grader_flags, `${file}: grader_flags`),
      accept_score: numberOf(full.accept_score, `${file}: accept_score`),
      reject_score: numberOf(full.reject_score, `${file}: reject_score`),
      range: rangeOf(full.range, `${file}: range`),
    };
    const flags = outputValidatorFlags(full.output_validator_flags, file);
    const items: GroupItem[] = [];
    for (const e of entries(dir, path, report)) {
      if ('test' in e) {
        const stem = `${path}/${e.test}`;
        const name = stem.slice('data/'.length);
        items.push({ test: tests.length });
        tests.push({ name, input: source(files.get(`${stem}.in`)!), answer: source(files.get(`${stem}.ans`)!), weight: 1, sample: name.startsWith('sample/'), ...(flags.length > 0 ? { validatorArgs: flags } : {}) });
      } else {
        items.push({ group: await walk(dir.dirs.get(e.dir)!, `${path}/${e.dir}`, config, statedHere) });
      }
    }
    return { name: path === 'data' ? '' : path.slice('data/'.length), legacy: rules, items };
  };
  const data = directoryTree(files, 'data/');
  const top = new Set(['sample', 'secret']);
  for (const d of data.dirs.keys()) if (!top.has(d)) report.ignore(`data/${d}/`, 'not a test group of the format (only data/sample and data/secret are judged)');
  for (const d of [...data.dirs.keys()]) if (!top.has(d)) data.dirs.delete(d);
  if ([...data.files].some((f) => f.endsWith('.in') || f.endsWith('.ans'))) throw refuse('data/ holds test files directly; they belong in data/sample/ or data/secret/');
  data.files.clear();
  return walk(data, 'data', {}, false);
}

/** testdata.yaml's output_validator_flags: a string (or {name, flags}), split as problemtools splits it. */
function outputValidatorFlags(value: unknown, file: string): string[] {
  let flags = value;
  if (flags !== null && typeof flags === 'object' && !Array.isArray(flags)) flags = (flags as Record<string, unknown>).flags ?? '';
  return splitFlags(flags, `${file}: output_validator_flags`);
}

const argsOf = (value: unknown, where: string): string[] => {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((a) => typeof a === 'string' || typeof a === 'number')) throw refuse(`${where} must be a sequence of strings`);
  return value.map(String);
};

const GROUP_IGNORED: Record<string, string> = {
  input_validator_args: 'input validators are not run here (the test data is taken as valid)',
  static_validator_args: 'static validation is not run here',
  input_visualizer_args: 'visualizers are not run here',
  output_visualizer_args: 'visualizers are not run here',
  full_feedback: "every test's result is shown to the submission's owner",
};
const CASE_IGNORED: Record<string, string> = { ...GROUP_IGNORED, hint: 'shown to judges only, not judged', description: 'shown to judges only, not judged' };
const SCORING_KEYS = ['max_score', 'score_aggregation', 'require_pass'];

/** The 2025-09 tree: data/sample, data/secret, and the groups of secret that hold a test_group.yaml. */
async function modernTree(files: PackageFiles, ctx: TreeContext, tests: DraftTest[]): Promise<GroupNode> {
  const { report } = ctx;
  const data = directoryTree(files, 'data/');
  const substitute = (text: string) =>
    text.replace(/\{\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?\}\}/g, (whole, name: string, variant?: string) => ctx.constants.get(variant && variant !== 'value' ? `${name}.${variant}` : name) ?? whole);

  const groupConfig = async (path: string, kind: 'sample' | 'secret' | 'group'): Promise<{ rules: ModernRules; args: string[] }> => {
    const file = `${path}/test_group.yaml`;
    const own = (await yamlMapping(files, file, substitute)) ?? {};
    if (files.has(file)) report.read(file);
    for (const key of Object.keys(own)) {
      if (SCORING_KEYS.includes(key)) {
        if (kind === 'sample') throw refuse(`${file}: ${key} is not permitted in sample`);
        if (!ctx.scoring) throw refuse(`${file}: ${key} is for scoring problems; this one is pass-fail`);
        report.read(`${file}: ${key}`);
      } else if (key === 'output_validator_args') report.read(`${file}: ${key}`);
      else if (key === 'args') {
        if (argsOf(own.args, `${file}: args`).length > 0) throw refuse(`${file}: args (command-line arguments for the submission) are not passed to submissions here: refused`);
        report.read(`${file}: args`);
      } else if (key === 'static_validation_score') throw refuse(`${file}: static_validation_score: static validation is not run here: refused`);
      else if (key in GROUP_IGNORED) report.ignore(`${file}: ${key}`, GROUP_IGNORED[key]!);
      else report.ignore(`${file}: ${key}`, 'not a key of test_group.yaml');
    }
    const maxValue = own.max_score;
    let max: number | null = kind === 'secret' ? 100 : null;
    if (maxValue === 'unbounded') max = null;
    else if (maxValue !== undefined) {
      if (typeof maxValue !== 'number' || !Number.isInteger(maxValue) || maxValue < 0) throw refuse(`${file}: max_score must be a non-negative integer or unbounded`);
      max = maxValue;
    }
    const aggregation = own.score_aggregation ?? (kind === 'secret' ? 'sum' : 'pass-fail');
    if (aggregation !== 'pass-fail' && aggregation !== 'sum' && aggregation !== 'min') throw refuse(`${file}: score_aggregation must be pass-fail, sum or min`);
    const require = own.require_pass === undefined || own.require_pass === null ? [] : typeof own.require_pass === 'string' ? [own.require_pass] : own.require_pass;
    if (!Array.isArray(require) || !require.every((r) => typeof r === 'string')) throw refuse(`${file}: require_pass must be a group's name or a sequence of them`);
    if (ctx.scoring && kind !== 'sample' && aggregation === 'pass-fail' && max === null) throw refuse(`${file}: a group of pass-fail aggregation needs a bounded max_score`);
    return { rules: { max_score: kind === 'sample' ? null : max, score_aggregation: kind === 'sample' ? 'pass-fail' : aggregation, require_pass: require as string[] }, args: argsOf(own.output_validator_args, `${file}: output_validator_args`) };
  };

  /** The tests of a directory and all below it (no groups there), in order. */
  const collect = async (dir: Dir, path: string, args: string[], items: GroupItem[]): Promise<void> => {
    for (const d of dir.dirs.keys()) {
      if (d.endsWith('.files')) throw refuse(`${path}/${d}/: a test's input files (.files) are not given to submissions here: refused`);
    }
    for (const f of dir.files) {
      if (f === 'test_group.yaml') {
        if (path.split('/').length > 3 || (path.split('/').length === 3 && !path.startsWith('data/secret/'))) throw refuse(`${path}/test_group.yaml: test data groups do not nest (2025-09)`);
        continue;
      }
      const ext = f.slice(f.indexOf('.'));
      if (['.interaction', '.out', '.in.statement', '.ans.statement', '.in.download', '.ans.download', '.png', '.jpg', '.jpeg', '.svg'].includes(ext)) {
        report.ignore(`${path}/*${ext}`, ext === '.interaction' || ext === '.out' || ext.includes('statement') ? 'shown in statements, not judged' : ext.includes('download') ? 'downloads, not judged' : 'illustrations, not judged');
      }
    }
    for (const e of entries(dir, path, report)) {
      if ('test' in e) {
        const stem = `${path}/${e.test}`;
        const name = stem.slice('data/'.length);
        let caseArgs = args;
        const yamlPath = `${stem}.yaml`;
        const own = await yamlMapping(files, yamlPath);
        if (own) {
          report.read(`data/**/*.yaml (test cases' own)`);
          for (const key of Object.keys(own)) {
            if (key === 'output_validator_args') caseArgs = argsOf(own[key], `${yamlPath}: output_validator_args`);
            else if (key === 'args') {
              if (argsOf(own.args, `${yamlPath}: args`).length > 0) throw refuse(`${yamlPath}: args (command-line arguments for the submission) are not passed to submissions here: refused`);
            } else if (key in CASE_IGNORED) report.ignore(`${yamlPath.replace(/[^/]*$/, '*.yaml')}: ${key}`, CASE_IGNORED[key]!);
            else throw refuse(`${yamlPath}: ${key} is not a key of a test case's configuration`);
          }
        }
        items.push({ test: tests.length });
        tests.push({ name, input: source(files.get(`${stem}.in`)!), answer: source(files.get(`${stem}.ans`)!), weight: 1, sample: name.startsWith('sample/'), ...(caseArgs.length > 0 ? { validatorArgs: caseArgs } : {}) });
      } else if (!e.dir.endsWith('.files')) {
        const sub = dir.dirs.get(e.dir)!;
        if (sub.files.has('test_group.yaml')) throw refuse(`${path}/${e.dir}/test_group.yaml: test data groups do not nest (2025-09)`);
        await collect(sub, `${path}/${e.dir}`, args, items);
      }
    }
  };

  const validation = ['invalid_input', 'invalid_output', 'valid_output'];
  const rootItems: GroupItem[] = [];
  for (const d of [...data.dirs.keys()].sort()) {
    if (validation.includes(d)) {
      report.ignore(`data/${d}/`, 'test data for validators, not judged');
      continue;
    }
    if (d !== 'sample' && d !== 'secret') {
      report.ignore(`data/${d}/`, 'not a test group of the format (only data/sample and data/secret are judged)');
      continue;
    }
    const dir = data.dirs.get(d)!;
    const path = `data/${d}`;
    const { rules, args } = await groupConfig(path, d);
    const items: GroupItem[] = [];
    const groups = d === 'secret' ? [...dir.dirs.keys()].filter((g) => dir.dirs.get(g)!.files.has('test_group.yaml')) : [];
    if (groups.length > 0) {
      if ([...dir.files].some((f) => f.endsWith('.in'))) throw refuse('data/secret/ holds both test data groups (directories with test_group.yaml) and tests of its own: use one');
      const plain = [...dir.dirs.keys()].filter((g) => !groups.includes(g));
      if (plain.length > 0) throw refuse(`data/secret/${plain[0]}/ has no test_group.yaml, but data/secret/ has test data groups: every directory there must be one`);
      for (const g of groups.sort()) {
        const gpath = `${path}/${g}`;
        const config = await groupConfig(gpath, 'group');
        const groupItems: GroupItem[] = [];
        await collect(dir.dirs.get(g)!, gpath, config.args.length > 0 ? config.args : args, groupItems);
        if (groupItems.length === 0) throw refuse(`${gpath}/ holds no test case`);
        items.push({ group: { name: gpath.slice('data/'.length), modern: config.rules, items: groupItems } });
      }
    } else await collect(dir, path, args, items);
    rootItems.push({ group: { name: d, modern: rules, items } });
  }
  if ([...data.files].some((f) => f.endsWith('.in'))) throw refuse('data/ holds test files directly; they belong in data/sample/ or data/secret/');
  checkRequirePass(rootItems);
  return { name: '', modern: { max_score: null, score_aggregation: 'pass-fail', require_pass: [] }, items: rootItems };
}

/** require_pass names groups that exist, come earlier, and are of pass-fail aggregation (the spec's rules). */
function checkRequirePass(items: GroupItem[]): void {
  const groups: GroupNode[] = [];
  const walk = (list: GroupItem[]) => {
    for (const item of list) if ('group' in item) {
      groups.push(item.group);
      walk(item.group.items);
    }
  };
  walk(items);
  for (const g of groups) {
    for (const name of g.modern!.require_pass) {
      const target = groups.find((x) => x.name === name);
      const where = `data/${g.name}/test_group.yaml: require_pass`;
      if (!target) throw refuse(`${where} names ${JSON.stringify(name)}, which is not a test data group (or sample)`);
      if (!(target.name < g.name) || g.name.startsWith(`${target.name}/`)) throw refuse(`${where} names ${name}, which does not come before it`);
      if (target.modern!.score_aggregation !== 'pass-fail') throw refuse(`${where} names ${name}, whose aggregation is not pass-fail`);
      if (g.name === 'secret' && name !== 'sample') throw refuse(`${where}: secret may require only sample`);
    }
  }
}

/** The package's tests in the tree's order, and the tree. */
export async function readTestTree(files: PackageFiles, ctx: TreeContext): Promise<{ tests: DraftTest[]; tree: GroupTree }> {
  const tests: DraftTest[] = [];
  const root = ctx.format === 'legacy' ? await legacyTree(files, ctx, tests) : await modernTree(files, ctx, tests);
  if (tests.length === 0) throw refuse('the package has no tests: data/sample/ and data/secret/ hold no .in files');
  ctx.report.read('data/');
  return { tests, tree: { format: ctx.format, scoring: ctx.scoring, root } };
}
