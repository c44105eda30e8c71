import { expect } from 'chai';
import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';

// Python 3.9 and 2.7: interpreted, no compile stage (compile_output stays null).

describeCompiler('python-3.9.7', [
  { name: 'hello world', code: "print('Hello, World!')\n", check: (r) => (succeeds('Hello, World!\n')(r), expect(r.compile_output).to.equal(null)) },
  { name: 'echoes standard input', code: 'import sys\nsys.stdout.write(sys.stdin.read())\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: 'import sys\nprint("before")\nsys.stderr.write("failing on purpose\\n")\nsys.exit(3)\n',
    check: runtimeError(3, 'failing on purpose', 'before\n'),
  },
  { name: 'an uncaught exception is runtime_error 1 with the traceback', code: 'raise ValueError("bad value")\n', check: runtimeError(1, 'ValueError: bad value') },
  { name: 'Python 3.9: dict union |', code: "a = {'x': 1}\nb = {'y': 2}\nprint(a | b)\n", check: succeeds("{'x': 1, 'y': 2}\n") },
  { name: 'is Python 3.9', code: 'import sys\nprint(sys.version_info[:2])\n', check: succeeds('(3, 9)\n') },
]);

describeCompiler('python-2.7.18', [
  { name: 'hello world', code: "print 'Hello, World!'\n", check: (r) => (succeeds('Hello, World!\n')(r), expect(r.compile_output).to.equal(null)) },
  { name: 'echoes standard input', code: 'import sys\nsys.stdout.write(sys.stdin.read())\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'import sys\nsys.stderr.write("nope\\n")\nsys.exit(4)\n', check: runtimeError(4, 'nope') },
  // print is a statement: a parenthesised pair prints as a tuple, as only Python 2 does.
  { name: 'Python 2: the print statement', code: "print 'a', 1\nprint('b', 2)\n", check: succeeds("a 1\n('b', 2)\n") },
  { name: 'Python 2: integer division and long literals', code: 'print 7 / 2, 2L ** 70\n', check: succeeds('3 1180591620717411303424\n') },
]);
