import { expect } from 'chai';
import type { GroupNode } from '../../src/judge/groups.js';
import { compilerForPackageFile } from '../../src/problems/compilers.js';
import { ProblemInputError, type ProblemDraft } from '../../src/problems/draft.js';
import { openPackage } from '../../src/problems/package.js';
import { makeZip, type ZipEntryInput } from '../helpers/zip.js';

// Packages in every dialect read as the tree of test groups their judge reads (legacy and
// 2023-07-draft testdata.yaml, 2025-09 test_group.yaml, DOMjudge's additions), with the
// report of every key read or ignored, and refused, naming the key, where runbox cannot
// honour what the package says. Every package here is written by the test.

const compilerFor = compilerForPackageFile(new Set(['g++-9', 'python-3.9.7']));

async function draftOf(entries: ZipEntryInput[]): Promise<ProblemDraft> {
  const { draft, close } = await openPackage(makeZip(entries), { compilerFor });
  close();
  return draft;
}

async function refusal(entries: ZipEntryInput[]): Promise<string> {
  try {
    const { close } = await openPackage(makeZip(entries), { compilerFor });
    close();
  } catch (err) {
    expect(err).to.be.instanceOf(ProblemInputError);
    return (err as ProblemInputError).message;
  }
  throw new Error('the package was taken');
}

const testCase = (path: string, content = '1\n'): ZipEntryInput[] => [
  { name: `${path}.in`, content },
  { name: `${path}.ans`, content },
];

/** A group tree as names and items, to compare. */
function shape(node: GroupNode, names: string[]): unknown {
  return { name: node.name, items: node.items.map((i) => ('test' in i ? names[i.test] : shape(i.group, names))) };
}

describe('problems: package groups and dialects', () => {
  describe('legacy and 2023-07-draft (testdata.yaml)', () => {
    it('every directory a group, in lexicographic order; settings inherited; a link reusing tests (oddecho)', async () => {
      const d = await draftOf([
        { name: 'p/problem.yaml', content: 'problem_format_version: 2023-07-draft\ntype: scoring\nname: {en: Odd}\n' },
        { name: 'p/data/testdata.yaml', content: 'on_reject: continue\nrange: 0 100\ngrader_flags: ignore_sample\n' },
        { name: 'p/data/sample/testdata.yaml', content: 'accept_score: 0\nrange: 0 0\ngrader_flags: first_error\n' },
        ...testCase('p/data/sample/1'),
        { name: 'p/data/secret/testdata.yaml', content: 'grader_flags: first_error accept_if_any_accepted\ninput_validator_flags: nFive=0\n' },
        { name: 'p/data/secret/subtask2/testdata.yaml', content: 'on_reject: break\naccept_score: 50\nrange: 0 50\ngrader_flags: min\n' },
        { name: 'p/data/secret/subtask2/1.in', content: '../subtask1/1.in', mode: 0o120777 },
        { name: 'p/data/secret/subtask2/1.ans', content: '../subtask1/1.ans', mode: 0o120777 },
        ...testCase('p/data/secret/subtask2/0'),
        { name: 'p/data/secret/subtask1/testdata.yaml', content: 'on_reject: break\naccept_score: 50\nrange: 0 50\ngrader_flags: min\n' },
        ...testCase('p/data/secret/subtask1/10'),
        ...testCase('p/data/secret/subtask1/1'),
        ...testCase('p/data/secret/subtask1/2'),
        { name: 'p/problem_statement/problem.en.tex', content: '\\problemname{Odd}' },
        { name: 'p/input_validators/v/v.py', content: 'import sys\n' },
        { name: 'p/generators/gen.py', content: '' },
      ]);
      const names = d.tests.map((t) => t.name);
      expect(names).to.deep.equal(['sample/1', 'secret/subtask1/1', 'secret/subtask1/10', 'secret/subtask1/2', 'secret/subtask2/0', 'secret/subtask2/1']);
      expect(d.tests.map((t) => t.sample)).to.deep.equal([true, false, false, false, false, false]);
      const tree = d.groups!;
      expect(tree).to.include({ format: 'legacy', scoring: true });
      expect(shape(tree.root, names)).to.deep.equal({
        name: '',
        items: [
          { name: 'sample', items: ['sample/1'] },
          { name: 'secret', items: [{ name: 'secret/subtask1', items: ['secret/subtask1/1', 'secret/subtask1/10', 'secret/subtask1/2'] }, { name: 'secret/subtask2', items: ['secret/subtask2/0', 'secret/subtask2/1'] }] },
        ],
      });
      const secret = (tree.root.items[1] as { group: GroupNode }).group;
      // Inherited from data/: on_reject continue, range; its own grader_flags.
      expect(secret.legacy).to.deep.equal({ on_reject: 'continue', on_reject_stated: true, grading: 'default', grader_flags: ['first_error', 'accept_if_any_accepted'], accept_score: 1, reject_score: 0, range: [0, 100] });
      const sub = (secret.items[0] as { group: GroupNode }).group;
      expect(sub.legacy).to.include({ on_reject: 'break', accept_score: 50 });
      expect(sub.legacy!.grader_flags).to.deep.equal(['min']);
      const report = d.package!.report;
      expect(report.format).to.equal('2023-07-draft');
      expect(report.type).to.deep.equal(['scoring']);
      expect(report.read).to.include.members(['data/', 'data/secret/testdata.yaml', 'data/secret/testdata.yaml: grader_flags', 'problem.yaml: type']);
      const ignored = Object.fromEntries(report.ignored.map((i) => [i.key, i.reason]));
      // The statement is read (shown in the portal and the widget), not ignored.
      expect(report.read).to.include('problem_statement/problem.en.tex');
      expect(ignored).to.not.have.property('problem_statement/');
      expect(ignored['input_validators/']).to.match(/input validators/);
      expect(ignored['generators/']).to.match(/generators/);
      expect(ignored['data/secret/testdata.yaml: input_validator_flags']).to.match(/input validators/);
    });

    it('grading: custom takes the package\'s grader from graders/ (built and run like a checker); graders/ unused is reported', async () => {
      const d = await draftOf([
        { name: 'problem.yaml', content: 'type: scoring\n' },
        { name: 'data/secret/testdata.yaml', content: 'grading: custom\ngrader_flags: double\n' },
        ...testCase('data/secret/1'),
        { name: 'graders/grader.py', content: 'print("AC 1")\n' },
      ]);
      expect(d.groups!.grader).to.deep.include({ compiler: 'python-3.9.7', convention: 'kattis' });
      expect(((d.groups!.root.items[0] as { group: GroupNode }).group.legacy)).to.include({ grading: 'custom' });
      expect(d.groups!.root.legacy).to.include({ grading: 'default' });
      expect(d.package!.report.read).to.include('graders/');
      const unused = await draftOf([...testCase('data/secret/1'), { name: 'graders/grader.py', content: 'print("AC 1")\n' }]);
      expect(unused.groups!.grader).to.equal(undefined);
      expect(unused.package!.report.ignored).to.deep.include({ key: 'graders/', reason: 'grading: custom is not used by any group' });
    });

    it("problem.yaml's legacy grading overrides every group's; on_reject first_error is break", async () => {
      const d = await draftOf([
        { name: 'problem.yaml', content: 'type: scoring\ngrading:\n  on_reject: first_error\n  accept_score: 3\n' },
        { name: 'data/secret/g/testdata.yaml', content: 'accept_score: 9\non_reject: continue\n' },
        ...testCase('data/secret/g/1'),
      ]);
      const g = ((d.groups!.root.items[0] as { group: GroupNode }).group.items[0] as { group: GroupNode }).group;
      expect(g.legacy).to.include({ accept_score: 3, on_reject: 'break', on_reject_stated: true });
    });

    it('a pass-fail package states no on_reject: its tests all run (on_reject_stated false)', async () => {
      const d = await draftOf([...testCase('data/sample/1'), ...testCase('data/secret/1')]);
      expect(d.groups).to.include({ format: 'legacy', scoring: false });
      expect(d.groups!.root.legacy).to.include({ on_reject: 'break', on_reject_stated: false });
      expect(d.package!.report.format).to.equal('legacy');
    });

    it('refused, naming the key: on_reject, grading custom, range, accept_score; a 2025-09 file in a legacy package', async () => {
      const base = testCase('data/secret/1');
      expect(await refusal([...base, { name: 'data/secret/testdata.yaml', content: 'on_reject: stop\n' }])).to.match(/^data\/secret\/testdata.yaml: on_reject must be break or continue/);
      expect(await refusal([...base, { name: 'data/testdata.yaml', content: 'grading: custom\n' }])).to.match(/^data\/testdata.yaml: grading: custom, but the package has no grader program in graders\//);
      expect(await refusal([...base, { name: 'data/testdata.yaml', content: 'grading: fancy\n' }])).to.match(/grading must be default or custom/);
      expect(await refusal([...base, { name: 'problem.yaml', content: 'type: scoring\n' }, { name: 'data/testdata.yaml', content: 'range: 5\n' }])).to.match(/^data\/testdata.yaml: range must be two numbers/);
      expect(await refusal([...base, { name: 'problem.yaml', content: 'type: scoring\n' }, { name: 'data/testdata.yaml', content: 'range: 5 1\n' }])).to.match(/least score 5 is more than the most 1/);
      expect(await refusal([...base, { name: 'data/testdata.yaml', content: 'accept_score: lots\n' }])).to.match(/accept_score must be a number/);
      expect(await refusal([...base, { name: 'data/secret/test_group.yaml', content: 'max_score: 1\n' }])).to.match(/test_group.yaml is a 2025-09 file/);
      expect(await refusal([...base, { name: 'problem.yaml', content: 'type: multi-pass\n' }])).to.match(/type "multi-pass" is not one of pass-fail, scoring/);
      expect(await refusal([...base, { name: 'problem.yaml', content: 'problem_format_version: 2030-01\n' }])).to.match(/problem_format_version "2030-01" is not one runbox reads/);
    });
  });

  describe('2025-09 (test_group.yaml)', () => {
    const yaml = (extra = '') => ({ name: 'problem.yaml', content: `problem_format_version: 2025-09\ntype: scoring\nname: S\n${extra}` });

    it('sample, secret and its groups; max_score, score_aggregation, require_pass; constants in test_group.yaml; subdirectories of a group are its tests', async () => {
      const d = await draftOf([
        yaml('constants:\n  half: 50\n  tol: {value: "1e-6", tex: "10^{-6}"}\n'),
        ...testCase('data/sample/1'),
        { name: 'data/secret/test_group.yaml', content: 'score_aggregation: sum\n' },
        { name: 'data/secret/b/test_group.yaml', content: 'max_score: {{half}}\nscore_aggregation: min\nrequire_pass: secret/a\noutput_validator_args: [float_tolerance, "{{tol}}"]\n' },
        ...testCase('data/secret/b/deep/2'),
        ...testCase('data/secret/b/1'),
        { name: 'data/secret/a/test_group.yaml', content: 'max_score: 50\nrequire_pass: [sample]\nfull_feedback: true\n' },
        ...testCase('data/secret/a/1'),
        { name: 'data/secret/a/1.yaml', content: 'output_validator_args: [case_sensitive]\nhint: none\n' },
        ...testCase('data/invalid_input/1'),
      ]);
      const names = d.tests.map((t) => t.name);
      expect(names).to.deep.equal(['sample/1', 'secret/a/1', 'secret/b/1', 'secret/b/deep/2']);
      expect(shape(d.groups!.root, names)).to.deep.equal({
        name: '',
        items: [
          { name: 'sample', items: ['sample/1'] },
          { name: 'secret', items: [{ name: 'secret/a', items: ['secret/a/1'] }, { name: 'secret/b', items: ['secret/b/1', 'secret/b/deep/2'] }] },
        ],
      });
      const secret = (d.groups!.root.items[1] as { group: GroupNode }).group;
      expect(secret.modern).to.deep.equal({ max_score: 100, score_aggregation: 'sum', require_pass: [] });
      const [a, b] = secret.items.map((i) => (i as { group: GroupNode }).group);
      expect(a!.modern).to.deep.equal({ max_score: 50, score_aggregation: 'pass-fail', require_pass: ['sample'] });
      expect(b!.modern).to.deep.equal({ max_score: 50, score_aggregation: 'min', require_pass: ['secret/a'] });
      expect(d.tests.map((t) => t.validatorArgs)).to.deep.equal([undefined, ['case_sensitive'], ['float_tolerance', '1e-6'], ['float_tolerance', '1e-6']]);
      const ignored = Object.fromEntries(d.package!.report.ignored.map((i) => [i.key, i.reason]));
      expect(ignored['data/invalid_input/']).to.match(/validators, not judged/);
      expect(ignored['data/secret/a/test_group.yaml: full_feedback']).to.be.a('string');
      expect(ignored['data/secret/a/*.yaml: hint']).to.be.a('string');
    });

    it('type as a list: pass-fail interactive; multi-pass and submit-answer are taken into the type', async () => {
      const d = await draftOf([{ name: 'problem.yaml', content: 'problem_format_version: 2025-09\ntype: [pass-fail]\n' }, ...testCase('data/secret/1')]);
      expect(d.package!.report.type).to.deep.equal(['pass-fail']);
      expect(d.groups).to.include({ format: '2025-09', scoring: false });
    });

    it('refused, naming the key or path', async () => {
      const t = testCase('data/secret/g/1');
      const g = (content: string) => ({ name: 'data/secret/g/test_group.yaml', content });
      const cases: [ZipEntryInput[], RegExp][] = [
        [[yaml(), { name: 'data/sample/test_group.yaml', content: 'max_score: 5\n' }, ...testCase('data/sample/1'), ...testCase('data/secret/1')], /^data\/sample\/test_group.yaml: max_score is not permitted in sample/],
        [[{ name: 'problem.yaml', content: 'problem_format_version: 2025-09\n' }, g('max_score: 5\n'), ...t], /max_score is for scoring problems; this one is pass-fail/],
        [[yaml(), g('max_score: -1\n'), ...t], /max_score must be a non-negative integer or unbounded/],
        [[yaml(), g('score_aggregation: avg\n'), ...t], /score_aggregation must be pass-fail, sum or min/],
        [[yaml(), g('score_aggregation: pass-fail\n'), ...t], /pass-fail aggregation needs a bounded max_score/],
        [[yaml(), g('max_score: 5\nstatic_validation_score: 5\n'), ...t], /static_validation_score: static validation is not run here: refused/],
        [[yaml(), g('max_score: 5\nargs: [x]\n'), ...t], /args \(command-line arguments for the submission\) are not passed/],
        [[yaml(), g('max_score: 5\n'), ...t, { name: 'data/secret/g/1.yaml', content: 'args: [--fast]\n' }], /^data\/secret\/g\/1.yaml: args/],
        [[yaml(), g('max_score: 5\n'), ...t, { name: 'data/secret/g/1.yaml', content: 'colour: red\n' }], /^data\/secret\/g\/1.yaml: colour is not a key of a test case's configuration/],
        [[yaml(), g('max_score: 5\n'), ...t, { name: 'data/secret/g/1.files/input.txt', content: 'x' }], /^data\/secret\/g\/1.files\/: a test's input files \(.files\) are not given/],
        [[yaml(), g('max_score: 5\n'), ...t, ...testCase('data/secret/2')], /holds both test data groups .* and tests of its own/],
        [[yaml(), g('max_score: 5\n'), ...t, ...testCase('data/secret/h/1')], /^data\/secret\/h\/ has no test_group.yaml/],
        [[yaml(), g('max_score: 5\n'), ...t, { name: 'data/secret/g/x/test_group.yaml', content: '' }, ...testCase('data/secret/g/x/1')], /test data groups do not nest/],
        [[yaml(), g('max_score: 5\nrequire_pass: secret/zz\n'), ...t], /require_pass names "secret\/zz", which is not a test data group/],
        [[yaml(), g('max_score: 5\nrequire_pass: secret/h\n'), ...t, { name: 'data/secret/h/test_group.yaml', content: 'max_score: 5\n' }, ...testCase('data/secret/h/1')], /which does not come before it/],
        [[yaml(), g('max_score: 5\nscore_aggregation: min\n'), ...t, { name: 'data/secret/h/test_group.yaml', content: 'max_score: 5\nrequire_pass: secret/g\n' }, ...testCase('data/secret/h/1')], /whose aggregation is not pass-fail/],
        [[yaml('constants: [1]\n'), ...testCase('data/secret/1')], /constants must be a mapping/],
      ];
      for (const [entries, expected] of cases) expect(await refusal(entries)).to.match(expected);
    });
  });

  it("a link leaving the package where nothing is read (DOMjudge's problem.pdf) is not followed and is reported; under data/ it is refused", async () => {
    const d = await draftOf([{ name: 'hello/problem.pdf', content: '../../doc/examples/hello.pdf', mode: 0o120777 }, { name: 'hello/domjudge-problem.ini', content: 'timelimit=1\n' }, ...testCase('hello/data/secret/1')]);
    const ignored = Object.fromEntries(d.package!.report.ignored.map((i) => [i.key, i.reason]));
    expect(ignored['problem.pdf']).to.match(/outside the package: not followed/);
    expect(await refusal([{ name: 'hello/data/secret/2.in', content: '../../../../x.in', mode: 0o120777 }, ...testCase('hello/data/secret/1')])).to.match(/^the package's hello\/data\/secret\/2.in is a symbolic link to "..\/..\/..\/..\/x.in", outside the package: refused$/);
  });

  describe('limits, timing and DOMjudge', () => {
    const withLimits = (limits: string, version = '2025-09') => [{ name: 'problem.yaml', content: `problem_format_version: ${version}\nlimits:\n${limits}` }, ...testCase('data/secret/1')];

    it('time_limit, memory, output, guarantees within the service are taken; time_multipliers kept for verifying', async () => {
      const d = await draftOf(withLimits('  time_limit: 2\n  memory: 256\n  output: 4\n  compilation_time: 20\n  validation_time: 10\n  validation_memory: 256\n  time_multipliers:\n    ac_to_time_limit: 3\n    time_limit_to_tle: 1.2\n  time_resolution: 0.5\n'));
      expect(d.limits).to.deep.equal({ time: 2, memory: 256 * 1024, output: 4 * 1024 });
      expect(d.package!.timing).to.deep.equal({ time_limit_stated: true, time_limit_source: 'problem.yaml', ac_to_time_limit: 3, time_limit_to_tle: 1.2, time_resolution: 0.5 });
      expect(d.package!.report.read).to.include.members(['problem.yaml: limits.output', 'problem.yaml: limits.compilation_time', 'problem.yaml: limits.validation_time', 'problem.yaml: limits.validation_memory']);
      const none = await draftOf(withLimits('  time_multipliers: {ac_to_time_limit: 2}\n'));
      expect(none.package!.timing).to.deep.equal({ time_limit_stated: false, ac_to_time_limit: 2 });
      expect(none.limits.time).to.equal(undefined);
      const legacy = await draftOf(withLimits('  time_multiplier: 5\n  time_safety_margin: 2\n', 'legacy'));
      expect(legacy.package!.timing).to.deep.equal({ time_limit_stated: false, time_multiplier: 5, time_safety_margin: 2 });
    });

    it('refused naming the key: a limit above what runbox gives, or a code size it does not hold submissions to', async () => {
      expect(await refusal(withLimits('  output: 64\n'))).to.match(/^problem.yaml: limits.output is 64 MiB; .* refused$/);
      expect(await refusal(withLimits('  compilation_time: 600\n'))).to.match(/^problem.yaml: limits.compilation_time is 600 s; .* refused$/);
      expect(await refusal(withLimits('  validation_memory: 4096\n'))).to.match(/^problem.yaml: limits.validation_memory is 4096 MiB/);
      expect(await refusal(withLimits('  code: 128\n'))).to.match(/^problem.yaml: limits.code is 128 KiB/);
      expect(await refusal(withLimits('  memory: 100000\n'))).to.match(/limits.memory must be/);
      expect(await refusal(withLimits('  time_limit: 100\n'))).to.match(/limits.time must be from/);
      expect(await refusal(withLimits('  time_multipliers: {ac_to_time_limit: 0.5}\n'))).to.match(/time_multipliers.ac_to_time_limit must be a number of at least 1/);
    });

    it("unknown keys of limits and problem.yaml are reported, not dropped", async () => {
      const d = await draftOf([{ name: 'problem.yaml', content: 'problem_format_version: 2025-09\nuuid: x\nfancy: 1\nlimits:\n  turbo: 2\n' }, ...testCase('data/secret/1')]);
      const ignored = Object.fromEntries(d.package!.report.ignored.map((i) => [i.key, i.reason]));
      expect(ignored).to.include({ 'problem.yaml: fancy': 'not a key runbox reads', 'problem.yaml: limits.turbo': 'not a key of limits' });
      expect(ignored['problem.yaml: uuid']).to.be.a('string');
    });

    it("DOMjudge: domjudge-problem.ini's timelimit (unless problem.yaml or .timelimit says), points reported as not used", async () => {
      const d = await draftOf([{ name: 'domjudge-problem.ini', content: "probid='A'\ntimelimit='3'\npoints=5\n" }, ...testCase('data/secret/1')]);
      expect(d.limits.time).to.equal(3);
      expect(d.package!.timing).to.include({ time_limit_stated: true, time_limit_source: 'domjudge-problem.ini' });
      const ignored = Object.fromEntries(d.package!.report.ignored.map((i) => [i.key, i.reason]));
      expect(ignored['domjudge-problem.ini: points']).to.match(/points/);
      expect(d.package!.report.read).to.include('domjudge-problem.ini: timelimit');
      const dot = await draftOf([{ name: 'domjudge-problem.ini', content: 'timelimit=3\n' }, { name: '.timelimit', content: '2\n' }, ...testCase('data/secret/1')]);
      expect(dot.limits.time).to.equal(2);
      expect(dot.package!.timing.time_limit_source).to.equal('.timelimit');
    });
  });
});
