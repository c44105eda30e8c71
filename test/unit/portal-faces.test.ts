import { expect } from 'chai';
import { argsOf, inFormWords, isJudged, newFileName, optionsHint, optionsOf, playgroundRequest, type PlaygroundProgram } from '../../src/portal/playground-request.js';
import { formWords } from '../../src/program/compiler-options.js';
import { fileShown, sizeText } from '../../src/portal/returned-files.js';
import { verdictText, verdictWords } from '../../src/portal/verdicts.js';
import { TEST_VERDICTS, RESULT_VERDICTS } from '../../src/judge/verdict.js';
import { RUN_STATUSES } from '../../src/result.js';

// The plain rules the playground, the widget and the portal's pages share: the
// playground's form as a run request, how a returned file is shown, a verdict in words.

const program = (over: Partial<PlaygroundProgram> = {}): PlaygroundProgram => ({
  compiler: 'python-3.9.7',
  source: 'main.py',
  files: [{ name: 'main.py', content: 'print(1)' }],
  main: 0,
  args: '',
  options: '',
  input: '',
  tests: [],
  problem: '',
  ...over,
});

describe("the playground's form as a run request", () => {
  it("sends a lone file with the compiler's own name as code, anything else as files with main", () => {
    expect(playgroundRequest(program())).to.deep.equal({ compiler: 'python-3.9.7', code: 'print(1)', return_files: true });
    expect(playgroundRequest(program({ files: [{ name: 'app.py', content: 'x' }] }))).to.deep.equal({
      compiler: 'python-3.9.7',
      files: [{ name: 'app.py', content: 'x' }],
      main: 'app.py',
      return_files: true,
    });
    const two = playgroundRequest(program({ files: [{ name: 'util.py', content: 'u' }, { name: 'main.py', content: 'm' }], main: 1 }));
    expect(two.files!.map((f) => f.name)).to.deep.equal(['util.py', 'main.py']);
    expect(two.main).to.equal('main.py');
    expect(two).to.not.have.property('code');
  });

  it('arguments one per line (never split at spaces), options at spaces; input, tests or a problem, the last winning', () => {
    expect(argsOf('one two\n\nthree\r\n')).to.deep.equal(['one two', 'three']);
    expect(optionsOf('  -O2   -DX=1\n-Wall ')).to.deep.equal(['-O2', '-DX=1', '-Wall']);
    const r = playgroundRequest(program({ args: 'a b\nc', options: '-O2', input: 'in' }));
    expect(r).to.include({ input: 'in' });
    expect(r.args).to.deep.equal(['a b', 'c']);
    expect(r.compiler_options).to.deep.equal(['-O2']);
    const tests = program({ input: 'ignored', tests: [{ input: '1', expected: '2' }] });
    expect(isJudged(tests)).to.equal(true);
    expect(playgroundRequest(tests)).to.not.have.property('input');
    expect(playgroundRequest(tests).tests).to.deep.equal([{ input: '1', expected_output: '2' }]);
    const problem = program({ tests: [{ input: '1', expected: '2' }], problem: 'p-1' });
    expect(playgroundRequest(problem)).to.include({ problem: 'p-1' }).and.not.have.property('tests');
    expect(isJudged(program())).to.equal(false);
  });

  it("names an added file after the main file's extension, never one taken", () => {
    expect(newFileName(['main.py'], 'main.py')).to.equal('file2.py');
    expect(newFileName(['main.c', 'file2.c', 'x.h'], 'main.c')).to.equal('file4.c');
    expect(newFileName(['main.c', 'file3.c', 'x'], 'main.c')).to.equal('file4.c');
    expect(newFileName(['Makefile'], 'Makefile')).to.equal('file2.txt');
    expect(newFileName(['a'], 'src.d/run')).to.equal('file2.txt');
  });

  it('says which compiler options a compiler takes', () => {
    expect(optionsHint('python-3.9.7', [])).to.equal('python-3.9.7 takes no compiler options.');
    expect(optionsHint('gcc-9', ['-O[0-3]', '-Wall'])).to.equal('Separated by spaces. gcc-9 allows: -O… (0, 1, 2 or 3); -Wall.');
    // The allowed forms in words, not patterns; a refusal names the option by its place, from 1.
    expect(formWords('-std=(c|gnu)(89|11)')).to.equal('-std=… (c or gnu, then 89 or 11)');
    expect(formWords('-D[A-Za-z_][A-Za-z0-9_]*(=[^\\s]*)?')).to.equal('-DNAME[=VALUE]');
    expect(formWords('-W(no-)?[a-z][a-z0-9+-]*(=[a-z0-9]+)?')).to.equal('-W[no-]NAME[=VALUE]');
    expect(formWords('-O[0-3sg]?')).to.equal('-O[0, 1, 2, 3, s or g]');
    expect(inFormWords('compiler_options.1: "-frobnicate" is not allowed')).to.equal('Compiler option 2: "-frobnicate" is not allowed');
    expect(inFormWords('args.0: too long')).to.equal('Argument 1: too long');
  });
});

describe('what the faces show of a result', () => {
  it('shows PNG, JPEG and SVG as images, text up to 64 KB in a box, anything else as a link', () => {
    expect(fileShown({ mime: 'image/png', size: 5_000_000 })).to.equal('image');
    expect(fileShown({ mime: 'image/svg+xml', size: 10 })).to.equal('image');
    expect(fileShown({ mime: 'image/gif', size: 10 })).to.equal('link');
    expect(fileShown({ mime: 'text/csv', size: 65_536 })).to.equal('text');
    expect(fileShown({ mime: 'text/csv', size: 65_537 })).to.equal('link');
    expect(fileShown({ mime: 'application/json', size: 3 })).to.equal('text');
    expect(fileShown({ mime: 'application/octet-stream', size: 3 })).to.equal('link');
    expect([sizeText(12), sizeText(2048), sizeText(3 * 1024 * 1024)]).to.deep.equal(['12 bytes', '2.0 KB', '3.0 MB']);
  });

  it('has words for every status and verdict, and the verdict line with time and memory', () => {
    for (const v of [...RUN_STATUSES, ...TEST_VERDICTS, ...RESULT_VERDICTS]) expect(verdictWords(v), v).to.match(/^[A-Z][a-z ]+$/);
    expect(verdictText({ status: 'success', verdict: 'accepted', time: 0.041, memory: 2765 })).to.equal('Accepted · 41 ms · 2.7 MB');
    expect(verdictText({ status: 'success', verdict: 'wrong_answer', time: 1.5, memory: 800 })).to.equal('Wrong answer · 1.50 s · 800 KB');
    expect(verdictText({ status: 'runtime_error', exit_code: 3, time: null, total: 0.2, memory: null })).to.equal('Runtime error (exit code 3) · 200 ms');
    expect(verdictText({ status: 'success', truncated: true })).to.equal('Finished · output cut at 64 KB');
  });
});
