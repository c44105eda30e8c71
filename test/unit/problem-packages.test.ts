import { expect } from 'chai';
import { checkDraft, ProblemInputError, type ProblemDraft } from '../../src/problems/draft.js';
import { problemFromJson } from '../../src/problems/json.js';
import { compilerForPackageFile } from '../../src/problems/compilers.js';
import { openPackage } from '../../src/problems/package.js';
import { makeZip, type ZipEntryInput } from '../helpers/zip.js';
import { builtinMembers } from '../../src/judge/settings.js';
import { BUILTIN_CHECKER_TYPES } from '../../src/judge/checkers/index.js';

// Problem packages read as a problem setter's tools write them (the ICPC/Kattis layout
// and a plain tests/ archive), and refused with a message that says why when they are
// incomplete, too large or hostile: nothing of such a package is ever read past its
// zip directory.

// The recipes' language table over the compilers offered here (src/compilers/languages.ts).
const OFFERED = new Set(['g++-4.9', 'g++-9', 'gcc-9', 'python-3.9.7', 'python-2.7.18', 'perl-5.36', 'swipl-9.0']);
const compilerFor = compilerForPackageFile(OFFERED);

async function draftOf(entries: ZipEntryInput[]): Promise<ProblemDraft> {
  const { draft, close } = await openPackage(makeZip(entries), { compilerFor });
  try {
    // Read every test, as storing it would.
    for (const t of draft.tests) {
      (t as unknown as { inputText: string }).inputText = (await t.input.read()).toString();
      (t as unknown as { answerText: string }).answerText = (await t.answer.read()).toString();
    }
    return draft;
  } finally {
    close();
  }
}

async function refusal(entries: ZipEntryInput[] | Buffer): Promise<ProblemInputError> {
  try {
    const { draft, close } = await openPackage(Buffer.isBuffer(entries) ? entries : makeZip(entries), { compilerFor });
    try {
      for (const t of draft.tests) await Promise.all([t.input.read(), t.answer.read()]);
    } finally {
      close();
    }
  } catch (err) {
    expect(err).to.be.instanceOf(ProblemInputError);
    return err as ProblemInputError;
  }
  throw new Error('the package was taken');
}

const tests = (d: ProblemDraft) => d.tests.map((t) => ({ name: t.name, sample: t.sample, input: (t as unknown as { inputText: string }).inputText, answer: (t as unknown as { answerText: string }).answerText }));

describe('problems: packages', () => {
  it('the Kattis layout: problem.yaml, samples first, secret tests in path order, a testlib validator', async () => {
    const d = await draftOf([
      { name: 'sum/problem.yaml', content: 'name: Sum\nvalidation: custom\nlimits:\n  time_limit: 2\n  memory: 256\n' },
      { name: 'sum/data/secret/02.in', content: '5 6\n' },
      { name: 'sum/data/secret/02.ans', content: '11\n' },
      { name: 'sum/data/secret/01.in', content: '1 2\n' },
      { name: 'sum/data/secret/01.ans', content: '3\n' },
      { name: 'sum/data/sample/1.in', content: '2 2\n' },
      { name: 'sum/data/sample/1.ans', content: '4\n' },
      { name: 'sum/data/secret/testdata.yaml', content: 'ignored: true\n' },
      { name: 'sum/output_validators/check/check.cpp', content: '#include "testlib.h"\nint main(int argc, char** argv) { registerTestlibCmd(argc, argv); }\n' },
      { name: 'sum/output_validators/check/testlib.h', content: '// testlib\n' },
    ]);
    expect(d.name).to.equal('Sum');
    expect(d.limits).to.deep.equal({ time: 2, memory: 256 * 1024 });
    expect(tests(d)).to.deep.equal([
      { name: 'sample/1', sample: true, input: '2 2\n', answer: '4\n' },
      { name: 'secret/01', sample: false, input: '1 2\n', answer: '3\n' },
      { name: 'secret/02', sample: false, input: '5 6\n', answer: '11\n' },
    ]);
    expect(d.checker).to.deep.include({ type: 'program', compiler: 'g++-9', convention: 'testlib' });
    expect(d.checker.type === 'program' && d.checker.options).to.deep.equal({ main: 'check.cpp', files: [{ name: 'testlib.h', content_base64: Buffer.from('// testlib\n').toString('base64') }] });
    expect(d.interactor).to.equal(null);
  });

  it("a validator's language is its file's, by the judges' extensions: validate.cc (with validate.h) is C++, the newest g++ offered", async () => {
    const d = await draftOf([
      { name: 'problem.yaml', content: 'validation: custom\n' },
      { name: 'data/secret/1.in', content: '1' },
      { name: 'data/secret/1.ans', content: '1' },
      { name: 'output_validators/boolfind_run/validate.cc', content: '#include "validate.h"\nint main() { return 42; }\n' },
      { name: 'output_validators/boolfind_run/validate.h', content: '// helpers\n' },
    ]);
    expect(d.checker).to.deep.include({ type: 'program', compiler: 'g++-9', convention: 'kattis' });
    for (const name of ['v.C', 'v.c++', 'v.cxx']) {
      const other = await draftOf([{ name: 'problem.yaml', content: 'validation: custom\n' }, { name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/1.ans', content: '1' }, { name: `output_validators/v/${name}`, content: 'int main() {}\n' }]);
      expect(other.checker, name).to.deep.include({ compiler: 'g++-9' });
    }
  });

  it(".pl is Prolog in a Kattis package and Perl in a DOMjudge one (domjudge-problem.ini) or a plain archive; .py is Python 2 only under a python2 #! line", async () => {
    const kattis = [{ name: 'problem.yaml', content: 'validation: custom\n' }, { name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/1.ans', content: '1' }];
    const validator = (name: string, content = '') => ({ name: `output_validators/v/${name}`, content });
    expect((await draftOf([...kattis, validator('validator.pl')])).checker).to.deep.include({ compiler: 'swipl-9.0' });
    expect((await draftOf([...kattis, { name: 'domjudge-problem.ini', content: "timelimit='1'\n" }, validator('validator.pl')])).checker).to.deep.include({ compiler: 'perl-5.36' });
    const plain = [{ name: 'tests/1.in', content: '1' }, { name: 'tests/1.out', content: '1' }, { name: 'checker/checker.pl', content: '' }];
    expect((await draftOf(plain)).checker).to.deep.include({ compiler: 'perl-5.36' });
    expect((await draftOf([...kattis, validator('validator.py', '#!/usr/bin/env python2\nprint "x"\n')])).checker).to.deep.include({ compiler: 'python-2.7.18' });
    expect((await draftOf([...kattis, validator('validator.py', '#!/usr/bin/env python3\n')])).checker).to.deep.include({ compiler: 'python-3.9.7' });
    expect((await draftOf([...kattis, validator('validator.py2', 'print "x"\n')])).checker).to.deep.include({ compiler: 'python-2.7.18' });
  });

  it('Kattis: a validator without testlib is Kattis-convention; custom interactive makes it the interactor', async () => {
    const base = [{ name: 'data/secret/a.in', content: '1' }, { name: 'data/secret/a.ans', content: '1' }, { name: 'output_validators/v/validator.py', content: 'import sys\n' }];
    const checked = await draftOf([{ name: 'problem.yaml', content: 'validation: custom\n' }, ...base]);
    expect(checked.checker).to.deep.include({ type: 'program', compiler: 'python-3.9.7', convention: 'kattis', code: 'import sys\n' });
    const interactive = await draftOf([{ name: 'problem.yaml', content: 'validation: custom interactive\n' }, ...base]);
    expect(interactive.checker).to.deep.equal({ type: 'kattis', flags: [] });
    expect(interactive.interactor).to.deep.include({ compiler: 'python-3.9.7', convention: 'kattis' });
  });

  it("Kattis: the default validator is Kattis' own, with problem.yaml's validator_flags; .timelimit sets the time", async () => {
    const data = [{ name: 'data/secret/a.in', content: '1' }, { name: 'data/secret/a.ans', content: '1' }];
    expect((await draftOf(data)).checker).to.deep.equal({ type: 'kattis', flags: [] });
    expect((await draftOf([...data, { name: 'problem.yaml', content: 'validator_flags: float_tolerance 1e-4\n' }])).checker).to.deep.equal({ type: 'kattis', flags: ['float_tolerance', '1e-4'] });
    expect((await draftOf([...data, { name: 'problem.yaml', content: 'validator_flags: case_sensitive space_change_sensitive\n' }])).checker).to.deep.equal({ type: 'kattis', flags: ['case_sensitive', 'space_change_sensitive'] });
    expect((await draftOf([...data, { name: '.timelimit', content: '3\n' }])).limits).to.deep.equal({ time: 3 });
    // problemtools runs the default validator with them: a flag it does not know is its usage error, a judge error on every test.
    expect((await refusal([...data, { name: 'problem.yaml', content: 'validator_flags: ignore_case_and_everything\n' }])).message).to.match(/problem\.yaml: "ignore_case_and_everything" is not a flag of the default validator/);
    expect((await refusal([...data, { name: 'problem.yaml', content: 'validator_flags: float_tolerance tiny\n' }])).message).to.match(/float_tolerance needs a number/);
  });

  it("Kattis: a group's testdata.yaml output_validator_flags (inherited), 2025-09's test_group.yaml and a test's own output_validator_args", async () => {
    const d = await draftOf([
      { name: 'problem.yaml', content: 'validator_flags: case_sensitive\n' },
      { name: 'data/sample/1.in', content: '' },
      { name: 'data/sample/1.ans', content: '' },
      { name: 'data/secret/testdata.yaml', content: 'output_validator_flags: float_tolerance 1e-3\n' },
      { name: 'data/secret/g1/a.in', content: '' },
      { name: 'data/secret/g1/a.ans', content: '' },
      { name: 'data/secret/g2/testdata.yaml', content: 'output_validator_flags: space_change_sensitive\n' },
      { name: 'data/secret/g2/b.in', content: '' },
      { name: 'data/secret/g2/b.ans', content: '' },
    ]);
    expect(d.checker).to.deep.equal({ type: 'kattis', flags: ['case_sensitive'] });
    expect(d.tests.map((t) => [t.name, t.validatorArgs])).to.deep.equal([
      ['sample/1', undefined],
      ['secret/g1/a', ['float_tolerance', '1e-3']],
      ['secret/g2/b', ['space_change_sensitive']],
    ]);
    const modern = await draftOf([
      { name: 'problem.yaml', content: 'problem_format_version: 2025-09\ntype: scoring\n' },
      { name: 'data/sample/1.in', content: '' },
      { name: 'data/sample/1.ans', content: '' },
      { name: 'data/secret/g3/test_group.yaml', content: 'max_score: 100\nscore_aggregation: min\noutput_validator_args: [float_absolute_tolerance, 0.5]\n' },
      { name: 'data/secret/g3/c.in', content: '' },
      { name: 'data/secret/g3/c.ans', content: '' },
      { name: 'data/secret/g3/d.in', content: '' },
      { name: 'data/secret/g3/d.ans', content: '' },
      { name: 'data/secret/g3/d.yaml', content: 'output_validator_args: [float_relative_tolerance, "1e-9"]\n' },
    ]);
    expect(modern.tests.map((t) => [t.name, t.validatorArgs])).to.deep.equal([
      ['sample/1', undefined],
      ['secret/g3/c', ['float_absolute_tolerance', '0.5']],
      ['secret/g3/d', ['float_relative_tolerance', '1e-9']],
    ]);
    // The default validator's flags are checked with each test's.
    const bad = await refusal([
      { name: 'data/secret/a.in', content: '' },
      { name: 'data/secret/a.ans', content: '' },
      { name: 'data/secret/testdata.yaml', content: 'output_validator_flags: --verbose\n' },
    ]);
    expect(bad.message).to.match(/test secret\/a: "--verbose" is not a flag of the default validator/);
    expect((await refusal([{ name: 'problem.yaml', content: 'problem_format_version: 2025-09\n' }, { name: 'data/secret/a.in', content: '' }, { name: 'data/secret/a.ans', content: '' }, { name: 'data/secret/test_group.yaml', content: 'output_validator_args: {a: 1}\n' }])).message).to.match(/output_validator_args must be a sequence of strings/);
  });

  it("Kattis: a custom validator's flags are its own: any flag, passed on as its arguments", async () => {
    const d = await draftOf([
      { name: 'problem.yaml', content: 'validation: custom\nvalidator_flags: --mode strict 3\n' },
      { name: 'data/secret/testdata.yaml', content: 'output_validator_flags: group_flag\n' },
      { name: 'data/secret/a.in', content: '' },
      { name: 'data/secret/a.ans', content: '' },
      { name: 'output_validators/v/validator.py', content: 'import sys\n' },
    ]);
    expect(d.checker).to.deep.include({ type: 'program', convention: 'kattis', args: ['--mode', 'strict', '3'] });
    expect(d.tests[0]!.validatorArgs).to.deep.equal(['group_flag']);
    // 2023-07 on: a validator in output_validator/ is used without `validation`.
    const modern = await draftOf([
      { name: 'problem.yaml', content: 'problem_format_version: 2025-09\ntype: pass-fail\n' },
      { name: 'data/secret/a.in', content: '' },
      { name: 'data/secret/a.ans', content: '' },
      { name: 'output_validator/validator.py', content: 'import sys\n' },
    ]);
    expect(modern.checker).to.deep.include({ type: 'program', convention: 'kattis' });
    const interactive = await draftOf([
      { name: 'problem.yaml', content: 'problem_format_version: 2023-07-draft\ntype: [pass-fail, interactive]\n' },
      { name: 'data/secret/a.in', content: '' },
      { name: 'data/secret/a.ans', content: '' },
      { name: 'output_validator/interactor.py', content: 'import sys\n' },
    ]);
    expect(interactive.interactor).to.deep.include({ convention: 'kattis' });
    expect((await refusal([{ name: 'problem.yaml', content: 'problem_format_version: 2025-09\ntype: interactive\n' }, { name: 'data/secret/a.in', content: '' }, { name: 'data/secret/a.ans', content: '' }])).message).to.match(/type: interactive, but the package has no output_validator/);
  });

  it("DOMjudge: a package with domjudge-problem.ini and no special_compare is judged by DOMjudge's compare, with its flags; another compare is refused", async () => {
    const data = [{ name: 'data/secret/a.in', content: '1' }, { name: 'data/secret/a.ans', content: '1' }];
    expect((await draftOf([...data, { name: 'domjudge-problem.ini', content: "name='Sum'\nspecial_compare=''\ntimelimit='2'\n" }])).checker).to.deep.equal({ type: 'domjudge', flags: [] });
    expect((await draftOf([...data, { name: 'domjudge-problem.ini', content: 'name=Sum\n' }, { name: 'problem.yaml', content: 'validator_flags: float_tolerance 1e-6\n' }])).checker).to.deep.equal({ type: 'domjudge', flags: ['float_tolerance', '1e-6'] });
    expect((await refusal([...data, { name: 'domjudge-problem.ini', content: "special_compare='float_compare'\n" }])).message).to.match(/special_compare names "float_compare"/);
  });

  it('the plain layout: tests/NAME.in + tests/NAME.out, the lines comparison, a checker/ directory', async () => {
    const d = await draftOf([
      { name: 'tests/b.in', content: 'B' },
      { name: 'tests/b.out', content: 'b' },
      { name: 'tests/a.in', content: 'A', store: true },
      { name: 'tests/a.out', content: 'a', store: true },
    ]);
    expect(tests(d)).to.deep.equal([
      { name: 'a', sample: false, input: 'A', answer: 'a' },
      { name: 'b', sample: false, input: 'B', answer: 'b' },
    ]);
    expect(d.checker).to.deep.equal({ type: 'lines' });
    const checked = await draftOf([{ name: 'tests/a.in', content: 'A' }, { name: 'tests/a.out', content: 'a' }, { name: 'checker/checker.cpp', content: 'int main(){}' }, { name: 'checker/util.cpp', content: '' }]);
    expect(checked.checker).to.deep.include({ type: 'program', compiler: 'g++-9', convention: 'kattis' });
  });

  describe('refused, saying why', () => {
    it('an .in without its .ans (or .out), and an answer without its input', async () => {
      expect((await refusal([{ name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/2.in', content: '2' }, { name: 'data/secret/2.ans', content: '2' }])).message).to.equal('data/secret/1.in has no data/secret/1.ans beside it');
      // An answer alone is no test (problemtools and DOMjudge load tests by their .in; DOMjudge's boolfind has one): reported, not refused.
      const stray = await draftOf([{ name: 'data/sample/x.ans', content: '1' }, { name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/1.ans', content: '1' }]);
      expect(stray.tests.map((t) => t.name)).to.deep.equal(['secret/1']);
      expect(stray.package!.report.ignored).to.deep.include({ key: 'data/sample/x.ans', reason: 'an answer without x.in: not a test' });
      expect((await refusal([{ name: 'tests/1.in', content: '1' }])).message).to.equal('tests/1.in has no tests/1.out beside it');
    });

    it('no tests at all, or both layouts', async () => {
      expect((await refusal([{ name: 'README', content: 'hi' }])).message).to.match(/^the package has no tests: it holds data\/sample/);
      expect((await refusal([{ name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/1.ans', content: '1' }, { name: 'tests/1.in', content: '1' }, { name: 'tests/1.out', content: '1' }])).message).to.match(/both data\//);
    });

    it('a file over 16 MiB, from its zip directory, before anything is inflated', async () => {
      const big = Buffer.alloc(16 * 1024 * 1024 + 1, 0x31);
      const err = await refusal([{ name: 'tests/1.in', content: big }, { name: 'tests/1.out', content: '1' }]);
      expect(err.code).to.equal('test_file_too_large');
      expect(err.message).to.equal("the package's tests/1.in is 16777217 bytes; a file may have at most 16777216 bytes (16 MiB)");
    });

    it('path traversal: an entry named ../ or /', async () => {
      for (const name of ['../../etc/cron.d/x', 'tests/../../x.in', '/etc/passwd']) {
        const err = await refusal([{ name, content: 'x' }, { name: 'tests/1.in', content: '1' }, { name: 'tests/1.out', content: '1' }]);
        expect(err.code, name).to.equal('invalid_package');
        expect(err.message, name).to.match(/points outside the package/);
      }
    });

    it('a symbolic link leaving the package, or naming nothing in it, or in a loop', async () => {
      const err = await refusal([{ name: 'tests/1.in', content: '/etc/shadow', mode: 0o120777 }, { name: 'tests/1.out', content: '1' }]);
      expect(err.message).to.equal('the package\'s tests/1.in is a symbolic link to "/etc/shadow", outside the package: refused');
      const up = await refusal([{ name: 'p/tests/1.in', content: '../../../etc/passwd', mode: 0o120777 }, { name: 'p/tests/1.out', content: '1' }]);
      expect(up.message).to.match(/symbolic link to "\.\.\/\.\.\/\.\.\/etc\/passwd", outside the package: refused$/);
      const missing = await refusal([{ name: 'tests/1.in', content: 'nothing.in', mode: 0o120777 }, { name: 'tests/1.out', content: '1' }]);
      expect(missing.message).to.equal("the package's tests/1.in is a symbolic link to tests/nothing.in, which is not in the package: refused");
      const loop = await refusal([{ name: 'tests/1.in', content: '2.in', mode: 0o120777 }, { name: 'tests/2.in', content: '1.in', mode: 0o120777 }, { name: 'tests/1.out', content: '1' }]);
      expect(loop.message).to.match(/a symbolic link in a loop/);
    });

    it('a symbolic link inside the package is followed: to a file, and to a directory', async () => {
      const d = await draftOf([
        { name: 'data/secret/a/1.in', content: 'one\n' },
        { name: 'data/secret/a/1.ans', content: 'ONE\n' },
        { name: 'data/secret/b/1.in', content: '../a/1.in', mode: 0o120777 },
        { name: 'data/secret/b/1.ans', content: '../a/1.ans', mode: 0o120777 },
        { name: 'data/secret/c', content: 'a', mode: 0o120777 },
      ]);
      expect(tests(d)).to.deep.equal([
        { name: 'secret/a/1', sample: false, input: 'one\n', answer: 'ONE\n' },
        { name: 'secret/b/1', sample: false, input: 'one\n', answer: 'ONE\n' },
        { name: 'secret/c/1', sample: false, input: 'one\n', answer: 'ONE\n' },
      ]);
    });

    it('a zip bomb whose directory declares a small size: inflating stops at the declared size', async () => {
      // 50 MB of zeros deflate to about 50 KB; the headers claim 1,000 bytes.
      const bomb = makeZip([{ name: 'tests/1.in', content: Buffer.alloc(50 * 1024 * 1024), declaredSize: 1000 }, { name: 'tests/1.out', content: '1' }]);
      expect(bomb.length).to.be.lessThan(100 * 1024);
      const err = await refusal(bomb);
      expect(err.code).to.equal('invalid_package');
      expect(err.message).to.match(/^the package's tests\/1.in is not what its zip directory says .*: a damaged or hostile zip$/);
    });

    it('not a zip, and a problem.yaml that is not YAML', async () => {
      expect((await refusal(Buffer.from('PK but not really'))).message).to.match(/^not a zip file, or a damaged one/);
      expect((await refusal([{ name: 'problem.yaml', content: 'a: [' }, { name: 'tests/1.in', content: '1' }, { name: 'tests/1.out', content: '1' }])).message).to.match(/^problem.yaml is not valid YAML/);
    });

    it('limits above the service', async () => {
      const err = await refusal([{ name: 'problem.yaml', content: 'limits:\n  time_limit: 60\n' }, { name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/1.ans', content: '1' }]);
      expect(err.message).to.equal('limits.time must be from 0.1 to 30 seconds (the service\'s), got 60');
    });

    it('a validator directory with several sources and no main one named', async () => {
      const err = await refusal([{ name: 'problem.yaml', content: 'validation: custom' }, { name: 'data/secret/1.in', content: '1' }, { name: 'data/secret/1.ans', content: '1' }, { name: 'output_validators/v/a.cpp', content: '' }, { name: 'output_validators/v/b.cpp', content: '' }]);
      expect(err.message).to.equal('output_validators/v/ holds several sources (a.cpp, b.cpp); name the main one validator, checker, interactor or main');
    });
  });
});

describe('problems: JSON', () => {
  it('tests with names (default: their numbers), weights and samples; the checker and limits', async () => {
    const d = problemFromJson({ name: 'Echo', tests: [{ input: 'a', expected_output: 'a', sample: true }, { name: 'big', input: 'b', expected_output: 'b', weight: 3 }], checker: { type: 'floats', absolute: 0.5 }, limits: { time: 1, memory: 65536 } });
    expect(d.tests.map((t) => [t.name, t.weight, t.sample, t.input.size])).to.deep.equal([['1', 1, true, 1], ['big', 3, false, 1]]);
    expect(d.checker).to.deep.equal({ type: 'floats', absolute: 0.5 });
    expect(d.limits).to.deep.equal({ time: 1, memory: 65536 });
  });

  it('refuses duplicate or malformed test names, a checker program without code, limits past the service', () => {
    const t = { input: '1', expected_output: '1' };
    expect(() => problemFromJson({ tests: [{ ...t, name: 'a' }, { ...t, name: 'a' }] })).to.throw(ProblemInputError, 'test name "a" is given twice');
    expect(() => problemFromJson({ tests: [{ ...t, name: '../x' }] })).to.throw(ProblemInputError, /must be segments of letters/);
    expect(() => problemFromJson({ tests: [t], checker: { type: 'program', compiler: 'g++-9', convention: 'testlib' } })).to.throw(ProblemInputError, 'checker.code: give either code or files');
    expect(() => problemFromJson({ tests: [t], limits: { memory: 1 << 30 } })).to.throw(ProblemInputError, /^limits.memory must be a whole number of KB from 32768 to 524288/);
    expect(() => checkDraft({ name: 'x', tests: [], checker: { type: 'lines' }, interactor: null, limits: {} })).to.throw(ProblemInputError, 'a problem needs at least one test');
  });

  it('the request schemas list exactly the built-in checkers', () => {
    expect(builtinMembers.map((m) => m.properties.type.const)).to.deep.equal(BUILTIN_CHECKER_TYPES);
  });
});
