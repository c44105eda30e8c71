import { expect } from 'chai';
import { catalogue } from '../../src/compilers/catalogue.js';
import { compileError, describeCompiler } from './harness.js';

// A judged run checks an interpreted program before its first test, as judges do (the
// recipe's check): a syntax error is compile_error with the interpreter's message and no
// test runs, while a plain run of the same program is the run's error, as it was.

/** A program with a syntax error in each language that has a check, and what its checker says. */
const BROKEN: Record<string, { code: string; message: RegExp }> = {
  'python-3.9.7': { code: 'print("a")\nprint("b"\n', message: /SyntaxError/ },
  'python-3.11': { code: 'print("a")\nprint("b"\n', message: /SyntaxError/ },
  'python-3.13': { code: 'print("a")\nprint("b"\n', message: /SyntaxError/ },
  'python-2.7.18': { code: 'print "a"\nprint "b\n', message: /SyntaxError/ },
  'ruby-3.0.2': { code: 'puts "a"\nputs("b"\n', message: /syntax error/ },
  'ruby-3.3': { code: 'puts "a"\nputs("b"\n', message: /syntax error/ },
  'perl-5.36': { code: 'print "a\\n";\n}\n', message: /Unmatched right curly|syntax error/ },
  'php-8.1': { code: '<?php\necho "a";\necho "b"\n', message: /syntax error/ },
  'php-8.4': { code: '<?php\necho "a";\necho "b"\n', message: /syntax error/ },
  'nodejs-18': { code: 'console.log("a");\nconsole.log("b"\n', message: /SyntaxError/ },
  'nodejs-20': { code: 'console.log("a");\nconsole.log("b"\n', message: /SyntaxError/ },
  'bash-5.2': { code: 'echo a\nif true; then\n', message: /syntax error/ },
  'lua-5.4': { code: 'print("a")\nprint("b"\n', message: /expected/ },
  'r-4.2': { code: 'print("a")\nprint("b"\n', message: /unexpected end of input|Error/ },
};

describe('syntax checks of judged runs', () => {
  it('cover every recipe that has a check', () => {
    const checked = [...catalogue().entries.values()].filter((e) => e.check).map((e) => e.id).sort();
    expect(checked).to.deep.equal(Object.keys(BROKEN).sort());
  });
});

for (const [id, { code, message }] of Object.entries(BROKEN)) {
  const hello = catalogue().entries.get(id)!.hello;
  describeCompiler(id, [
    { name: "a judged run with a syntax error is compile_error with the checker's message; no test runs", code, expectedOutput: 'a\n', check: compileError(message) },
    {
      name: 'a plain run of it keeps the run stage: the interpreter reports it',
      code,
      check: (r) => {
        expect(r.status, r.error).to.equal('runtime_error');
        expect(r.compile_output).to.equal(null);
        expect(r.error).to.match(message);
      },
    },
    {
      name: 'a judged run of a program that passes the check runs it',
      code: hello.code,
      expectedOutput: hello.output,
      check: (r) => expect(r, r.compile_output ?? '').to.include({ status: 'success', verdict: 'accepted' }),
    },
  ]);
}
