import { expect } from 'chai';
import { packageLanguageCode } from '../../src/compilers/languages.js';
import { multiPass, type PassOutcome } from '../../src/judge/multi-pass.js';
import { includedFor, withIncluded } from '../../src/problems/include.js';
import { parseInteraction } from '../../src/problems/interaction.js';
import { answerFiles } from '../../src/runner/answers.js';

// The pure parts of multi-pass judging, included files, interaction samples and
// submit-answer file names.

const b = (s: string) => Buffer.from(s);
const file = (name: string, content: string) => ({ name, content_base64: b(content).toString('base64') });

describe('multi-pass judging (the loop)', () => {
  const accepted = { verdict: 'accepted' as const, score: 1, message: '' };
  it('a pass that writes nextpass.in and exits 42 runs the next with that input and the feedback it left, nextpass.in taken out', async () => {
    const seen: [string, string[]][] = [];
    const done = await multiPass(b('one'), 3, async (input, feedback, n): Promise<PassOutcome<number>> => {
      seen.push([input.toString(), Object.keys(feedback)]);
      return { run: n, check: accepted, feedback: n < 3 ? { ...feedback, [`note${n}`]: b('x'), 'nextpass.in': b(`pass${n + 1}`) } : feedback };
    });
    expect(seen).to.deep.equal([['one', []], ['pass2', ['note1']], ['pass3', ['note1', 'note2']]]);
    expect(done).to.deep.include({ last: 3, passes: 3, check: accepted });
  });
  it('judge errors: one pass more than allowed; nextpass.in with a rejection', async () => {
    const always = await multiPass(b(''), 2, async (_i, _f, n) => ({ run: n, check: accepted, feedback: { 'nextpass.in': b('again') } }));
    expect(always.check!.verdict).to.equal('checker_error');
    expect(always.passes).to.equal(2);
    const rejecting = await multiPass(b(''), 5, async (_i, _f, n) => ({ run: n, check: { verdict: 'wrong_answer' as const, score: 0, message: 'no' }, feedback: { 'nextpass.in': b('again') } }));
    expect([rejecting.check!.verdict, rejecting.passes]).to.deep.equal(['checker_error', 1]);
    expect(rejecting.check!.message).to.match(/exit 43.*: no$/);
  });
  it("a program's ending stops the passes with no check", async () => {
    const done = await multiPass(b(''), 5, async (_i, _f, n) => (n === 2 ? { ended: 'timeout' } : { run: 'ok', check: accepted, feedback: { 'nextpass.in': b('x') } }));
    expect(done).to.deep.equal({ last: 'timeout', check: null, passes: 2 });
  });
});

describe('included files', () => {
  const cpp = { language: 'c++', version: '9.3.0', source: 'main.cpp' };
  const py = { language: 'python', version: '3.9.2', source: 'main.py' };
  it('language codes as the package format names them', () => {
    expect([cpp, py, { language: 'python', version: '2.7.18' }, { language: 'c', version: '12' }, { language: 'java', version: '17' }].map((r) => packageLanguageCode(r as { language: string; version: string }))).to.deep.equal(['cpp', 'python3', 'python2', 'c', 'java']);
  });
  it("a language's own directory, else default's", () => {
    const includes = { cpp: [file('grader.cpp', 'main')], default: [file('data.txt', 'd')] };
    expect(includedFor(includes, cpp).map((f) => f.name)).to.deep.equal(['grader.cpp']);
    expect(includedFor(includes, py).map((f) => f.name)).to.deep.equal(['data.txt']);
    expect(includedFor(null, py)).to.deep.equal([]);
  });
  it("overwrite the submission's files of the same name; a driver becomes the main file, the submission's main beside it", () => {
    const job = { code: 'int sum();', run_options: { files: [file('grader.cpp', 'mine'), file('util.h', 'u')] } };
    const merged = withIncluded(job, cpp, [file('grader.cpp', 'theirs')]);
    expect(merged.code).to.equal('int sum();');
    expect(merged.run_options!.main).to.equal('main.cpp');
    expect(merged.run_options!.files!.map((f) => [f.name, Buffer.from(f.content_base64, 'base64').toString()])).to.deep.equal([['util.h', 'u'], ['grader.cpp', 'theirs']]);
    const driven = withIncluded({ code: 'def solve(): pass', run_options: { main: 'solution.py' } }, py, [file('__main__.py', 'from solution import solve')]);
    expect(driven.code).to.equal('from solution import solve');
    expect(driven.run_options!.main).to.equal('__main__.py');
    expect(driven.run_options!.files!.map((f) => f.name)).to.deep.equal(['solution.py']);
  });
});

describe('interaction samples', () => {
  it('turns by their prefix, passes split by --- in a multi-pass problem; a line without one is refused', () => {
    expect(parseInteraction('<a\n>b\n---\n<c\n', true)).to.deep.equal([[{ from: 'judge', text: 'a' }, { from: 'program', text: 'b' }], [{ from: 'judge', text: 'c' }]]);
    expect(parseInteraction('<a\n---\n', false)).to.equal('line 2 does not start with < or >');
    expect(parseInteraction('<a\r\n', false)).to.deep.equal([[{ from: 'judge', text: 'a' }]]);
  });
});

describe('submit-answer file names', () => {
  it("NAME.out, or the base name's .out when no other test shares it", () => {
    const found = answerFiles(['secret/a', 'secret/g1/x', 'secret/g2/x'], [file('a.out', '1'), file('x.out', '2'), file('secret/g2/x.out', '3')]);
    expect([...found].map(([n, c]) => [n, c.toString()])).to.deep.equal([['secret/a', '1'], ['secret/g2/x', '3']]);
  });
});
