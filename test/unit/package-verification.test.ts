import { expect } from 'chai';
import { compilerForPackageFile } from '../../src/problems/compilers.js';
import { matches } from '../../src/problems/example-submissions.js';
import { openPackage } from '../../src/problems/package.js';
import { deriveTimeLimit, timeLimitOf } from '../../src/problems/time-limit.js';
import { findingOf } from '../../src/problems/verify.js';
import { PROBLEM_TIME_DEFAULTS } from '../../src/limits.js';
import { makeZip, type ZipEntryInput } from '../helpers/zip.js';

// A package's timing (its stated limit, or the multipliers a verification derives one
// with, as problemtools does) and its example submissions with what each must get, read
// from packages written here; and how a judged run meets its expectation.

const OFFERED = new Set(['g++-9', 'gcc-9', 'python-3.9.7', 'python-2.7.18']);
const compilerFor = compilerForPackageFile(OFFERED);
const data: ZipEntryInput[] = [
  { name: 'p/data/secret/1.in', content: '1\n' },
  { name: 'p/data/secret/1.ans', content: '1\n' },
];

async function draftOf(entries: ZipEntryInput[]) {
  const { draft, close } = await openPackage(makeZip([...data, ...entries]), { compilerFor });
  close();
  return draft;
}

describe('package timing and example submissions', () => {
  it('legacy: time_multiplier 5 and time_safety_margin 2 by default, or as problem.yaml says; no stated limit', async () => {
    expect((await draftOf([{ name: 'p/problem.yaml', content: 'name: P\n' }])).timing).to.deep.equal({ acToTimeLimit: 5, timeLimitToTle: 2, resolution: 1 });
    const d = await draftOf([{ name: 'p/problem.yaml', content: 'name: P\nlimits:\n  time_multiplier: 3\n  time_safety_margin: 4\n' }]);
    expect(d.timing).to.deep.equal({ acToTimeLimit: 3, timeLimitToTle: 4, resolution: 1 });
    expect(d.limits.time).to.equal(undefined);
  });

  it('2023-07 and 2025-09: time_multipliers (2.0 and 1.5 by default) and time_resolution; limits.time_limit stated', async () => {
    const d = await draftOf([{ name: 'p/problem.yaml', content: 'problem_format_version: 2025-09\nname: P\nlimits:\n  time_multipliers:\n    ac_to_time_limit: 3\n  time_resolution: 0.5\n  time_limit: 1.5\n' }]);
    expect(d.timing).to.deep.equal({ acToTimeLimit: 3, timeLimitToTle: 1.5, resolution: 0.5, stated: { seconds: 1.5, from: 'problem.yaml' } });
    const bad = await openPackage(makeZip([...data, { name: 'p/problem.yaml', content: 'problem_format_version: 2023-07-draft\nlimits:\n  time_multipliers:\n    ac_to_time_limit: 0.5\n' }]), { compilerFor }).catch((e: Error) => e);
    expect((bad as Error).message).to.equal('problem.yaml: limits.time_multipliers.ac_to_time_limit must be a number of at least 1');
  });

  it(".timelimit and domjudge-problem.ini's timelimit are stated limits, problem.yaml's first", async () => {
    expect((await draftOf([{ name: 'p/.timelimit', content: '4\n' }])).timing!.stated).to.deep.equal({ seconds: 4, from: '.timelimit' });
    const dj = await draftOf([{ name: 'p/domjudge-problem.ini', content: "name='P'\ntimelimit='3'\n" }]);
    expect([dj.timing!.stated, dj.limits.time]).to.deep.equal([{ seconds: 3, from: 'domjudge-problem.ini' }, 3]);
    const both = await draftOf([{ name: 'p/problem.yaml', content: 'limits:\n  time_limit: 2\n' }, { name: 'p/domjudge-problem.ini', content: 'timelimit = 3\n' }]);
    expect(both.timing!.stated).to.deep.equal({ seconds: 2, from: 'problem.yaml' });
  });

  it('derives as problemtools does: max(1, ⌈T × multiplier / resolution⌉) × resolution', () => {
    const legacy = { acToTimeLimit: 5, timeLimitToTle: 2, resolution: 1 };
    expect(deriveTimeLimit(legacy, 0.01)).to.equal(1);
    expect(deriveTimeLimit(legacy, 0.2)).to.equal(1);
    expect(deriveTimeLimit(legacy, 0.21)).to.equal(2);
    expect(deriveTimeLimit({ acToTimeLimit: 2, timeLimitToTle: 1.5, resolution: 0.1 }, 0.31)).to.equal(0.7);
    expect(deriveTimeLimit({ acToTimeLimit: 2, timeLimitToTle: 1.5, resolution: 0.1 }, 0.01)).to.equal(0.1);
    expect(timeLimitOf(undefined, null)).to.deep.equal({ seconds: PROBLEM_TIME_DEFAULTS.defaultSeconds, source: 'default' });
    expect(timeLimitOf(undefined, 3)).to.deep.equal({ seconds: 3, source: 'derived' });
    expect(timeLimitOf(1, 3)).to.deep.equal({ seconds: 1, source: 'stated' });
  });

  it('keeps submissions/<directory>/ files and directories with their language, expectation and whether they bound the time limit', async () => {
    const d = await draftOf([
      { name: 'p/submissions/accepted/a.py', content: 'print(1)\n' },
      { name: 'p/submissions/accepted/two.py', content: '#!/usr/bin/env python2\nprint 1\n' },
      { name: 'p/submissions/accepted/dir/main.py', content: 'import helper\n' },
      { name: 'p/submissions/accepted/dir/helper.py', content: 'X = 1\n' },
      { name: 'p/submissions/time_limit_exceeded/slow.cc', content: 'int main(){for(;;);}\n' },
      { name: 'p/submissions/wrong_answer/w.java', content: 'class W {}\n' },
      { name: 'p/submissions/mixed/m.c', content: '/* @EXPECTED_RESULTS@: CORRECT, TIMELIMIT */\nint main(){}\n' },
      { name: 'p/submissions/README', content: 'not a submission\n' },
    ]);
    expect(d.submissions!.map((x) => [x.path, x.compiler, x.main, x.files.map((f) => f.name), x.expected.said, x.expected.timeLimit])).to.deep.equal([
      ['accepted/a.py', 'python-3.9.7', 'a.py', ['a.py'], ['accepted/'], 'lower'],
      ['accepted/dir', 'python-3.9.7', 'main.py', ['helper.py', 'main.py'], ['accepted/'], 'lower'],
      ['accepted/two.py', 'python-2.7.18', 'two.py', ['two.py'], ['accepted/'], 'lower'],
      ['mixed/m.c', 'gcc-9', 'm.c', ['m.c'], ['@EXPECTED_RESULTS@: CORRECT, TIMELIMIT'], null],
      ['time_limit_exceeded/slow.cc', 'g++-9', 'slow.cc', ['slow.cc'], ['time_limit_exceeded/'], 'upper'],
      ['wrong_answer/w.java', null, 'w.java', [], ['wrong_answer/'], null],
    ]);
    expect(d.submissions![5]!.refusal).to.match(/w\.java: it is for openjdk-\S+, which is not installed here/);
    expect(d.submissions![3]!.expected.final).to.deep.equal(['AC', 'TLE']);
  });

  it("2025-09 submissions.yaml: a directory's own key replaces its defaults, other globs add requirements, use_for_time_limit", async () => {
    const d = await draftOf([
      { name: 'p/problem.yaml', content: 'problem_format_version: 2025-09\n' },
      { name: 'p/submissions/submissions.yaml', content: 'time_limit_exceeded:\n  permitted: [AC, WA, TLE]\n"accepted/{fast,quick}.py":\n  use_for_time_limit: false\nwrong_answer/*.py:\n  required: [WA]\n  permitted: [AC, WA]\n' },
      { name: 'p/submissions/accepted/fast.py', content: 'print(1)\n' },
      { name: 'p/submissions/accepted/slow.py', content: 'print(1)\n' },
      { name: 'p/submissions/time_limit_exceeded/t.py', content: 'while 1: pass\n' },
      { name: 'p/submissions/wrong_answer/w.py', content: 'print(2)\n' },
    ]);
    const by = Object.fromEntries(d.submissions!.map((x) => [x.path, x.expected]));
    expect(by['accepted/fast.py']).to.deep.include({ permitted: [['AC']], timeLimit: null });
    expect(by['accepted/slow.py']).to.deep.include({ permitted: [['AC']], timeLimit: 'lower' });
    expect(by['time_limit_exceeded/t.py']).to.deep.include({ permitted: [['AC', 'WA', 'TLE']], required: [['TLE']], said: ['submissions.yaml: time_limit_exceeded'] });
    // 2025-09: wrong answers bound the limit from below too.
    expect(by['wrong_answer/w.py']).to.deep.include({ permitted: [['AC', 'WA'], ['AC', 'WA']], required: [['WA'], ['WA']], timeLimit: 'lower' });
    expect(matches('accepted', 'accepted/x.py')).to.equal(true);
    expect(matches('*/x.py', 'accepted/x.py')).to.equal(true);
    expect(matches('accepted/*', 'accepted/dir')).to.equal(true);
    expect(matches('acc*', 'wrong_answer/acc.py')).to.equal(false);
  });

  it("a judged run against its expectation: permitted, required, DOMjudge's final verdict, compile errors, the validator's own failure", () => {
    const wa = { permitted: [['AC', 'WA'] as ('AC' | 'WA')[]], required: [['WA'] as 'WA'[]], said: ['wrong_answer/'], timeLimit: null };
    const run = (verdicts: string[], verdict = verdicts.find((v) => v !== 'accepted') ?? 'accepted') => ({ status: 'success' as const, verdict: verdict as never, score: 0, tests: verdicts.map((v, i) => ({ name: `t${i}`, verdict: v, time: 0.1 * (i + 1) })) });
    expect(findingOf(wa, run(['accepted', 'wrong_answer']))).to.deep.include({ code: 'WA', time: 0.2, mismatches: [] });
    expect(findingOf(wa, run(['accepted', 'accepted'])).mismatches).to.deep.equal(['no test got WA (required)']);
    expect(findingOf(wa, run(['accepted', 'timeout'])).mismatches).to.deep.equal(['t1 got TLE, permitted: AC, WA', 'no test got WA (required)']);
    expect(findingOf(wa, { status: 'compile_error', verdict: 'compile_error', score: 0 }).mismatches).to.deep.equal(['did not compile (permitted: AC, WA)', 'did not compile (required: WA)']);
    const dj = { permitted: [], required: [], final: ['CE' as const], said: ['compiler_error/'], timeLimit: null };
    expect(findingOf(dj, { status: 'compile_error', verdict: 'compile_error', score: 0 })).to.deep.include({ code: 'CE', mismatches: [] });
    expect(findingOf({ ...dj, final: ['AC'] }, run(['accepted', 'checker_error'])).mismatches).to.deep.equal(['the output validator failed on t1', 'got JE, expected AC']);
  });
});
