import { expect } from 'chai';
import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Current versions from Debian trixie on the trixie-interpreters image: Python 3.13,
// PHP 8.4, Ruby 3.3 and Node.js 20, with the settings of their bookworm identifiers.

const THREADS_JS = [
  "const { Worker } = require('node:worker_threads');",
  "const crypto = require('node:crypto');",
  "const workers = Array.from({ length: 4 }, (_, i) => new Promise((resolve, reject) => {",
  "  const w = new Worker('require(\"node:worker_threads\").parentPort.postMessage(1);', { eval: true });",
  "  w.once('message', resolve);",
  "  w.once('error', reject);",
  '}));',
  "const hashes = Array.from({ length: 8 }, (_, i) => new Promise((resolve, reject) => crypto.pbkdf2('pw', 'salt' + i, 2000, 32, 'sha256', (e, k) => (e ? reject(e) : resolve(k.length)))));",
  'Promise.all([...workers, ...hashes]).then((r) => console.log(`workers ${r.slice(0, 4).length}, hashes ${r.slice(4).reduce((a, b) => a + b)}, pool ${process.env.UV_THREADPOOL_SIZE}`));',
  '',
].join('\n');

describeCompiler('python-3.13', [
  ...recipePrograms('python-3.13'),
  { name: 'echoes standard input', code: 'import sys\nsys.stdout.write(sys.stdin.read())\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught exception is runtime_error 1 with the traceback', code: 'raise ValueError("broken")\n', check: runtimeError(1, 'ValueError: broken') },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'import sys\nprint("exiting 4", file=sys.stderr)\nsys.exit(4)\n', check: runtimeError(4, 'exiting 4') },
]);

describeCompiler('php-8.4', [
  ...recipePrograms('php-8.4'),
  { name: 'echoes standard input', code: '<?php\necho stream_get_contents(STDIN);\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught exception is runtime_error 255 with the message', code: '<?php\nthrow new RuntimeException("broken");\n', check: runtimeError(255, 'RuntimeException: broken') },
  { name: 'exit(N) is runtime_error with that exit code', code: '<?php\nfwrite(STDERR, "exiting 3\\n");\nexit(3);\n', check: runtimeError(3, 'exiting 3') },
]);

describeCompiler('ruby-3.3', [
  ...recipePrograms('ruby-3.3'),
  { name: 'echoes standard input', code: 'print $stdin.read\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught exception is runtime_error 1 with the message', code: 'raise ArgumentError, "broken"\n', check: runtimeError(1, 'broken (ArgumentError)') },
  { name: 'exit N is runtime_error with that exit code', code: 'warn "exiting 6"\nexit 6\n', check: runtimeError(6, 'exiting 6') },
]);

describeCompiler('nodejs-20', [
  ...recipePrograms('nodejs-20'),
  { name: 'echoes standard input (UTF-8)', code: "process.stdout.write(require('fs').readFileSync(0, 'utf8'));\n", input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught exception is runtime_error 1 with the stack', code: "throw new TypeError('broken');\n", check: runtimeError(1, 'TypeError: broken') },
  { name: 'worker threads and the libuv pool run (UV_THREADPOOL_SIZE=2)', code: THREADS_JS, check: succeeds('workers 4, hashes 256, pool 2\n') },
  {
    name: 'running out of heap is a V8 heap error, not a kill (--max-old-space-size=384)',
    code: 'const keep = [];\nfor (;;) keep.push(new Array(1e6).fill(keep.length));\n',
    check: (r) => {
      expect(r.status, r.error).to.equal('runtime_error');
      expect(r.error).to.contain('JavaScript heap out of memory');
    },
  },
  { name: 'nothing is printed on stderr at start (the CA store exists)', code: "console.log('quiet');\n", check: (r) => (succeeds('quiet\n')(r), expect(r.error).to.equal('')) },
]);
