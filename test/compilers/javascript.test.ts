import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Node.js 18, TypeScript (tsc, then node) and CoffeeScript, all on the nodejs image.

/** Four worker threads and eight pbkdf2 jobs on libuv's pool at once: threads work under the task cap. */
const THREADS_JS = [
  "const { Worker } = require('node:worker_threads');",
  "const crypto = require('node:crypto');",
  'const workers = Array.from({ length: 4 }, (_, i) => new Promise((resolve, reject) => {',
  "  const w = new Worker('const { parentPort, workerData } = require(\"node:worker_threads\"); let s = 0; for (let k = 0; k < 1e6; k++) s += k % (workerData + 2); parentPort.postMessage(s);', { eval: true, workerData: i });",
  "  w.once('message', resolve);",
  "  w.once('error', reject);",
  '}));',
  "const hashes = Array.from({ length: 8 }, (_, i) => new Promise((resolve, reject) => crypto.pbkdf2('pw', 'salt' + i, 2000, 32, 'sha256', (e, k) => (e ? reject(e) : resolve(k.length)))));",
  'Promise.all([...workers, ...hashes]).then((r) => {',
  "  console.log(`workers ${r.slice(0, 4).length}, hashes ${r.slice(4).reduce((a, b) => a + b)}, pool ${process.env.UV_THREADPOOL_SIZE}`);",
  '});',
  '',
].join('\n');

describeCompiler('nodejs-18', [
  ...recipePrograms('nodejs-18'),
  { name: 'echoes standard input (UTF-8)', code: "process.stdout.write(require('fs').readFileSync(0, 'utf8'));\n", input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: "console.error('exiting 7');\nprocess.exit(7);\n", check: runtimeError(7, 'exiting 7') },
  { name: 'an uncaught exception is runtime_error 1 with the stack', code: "throw new TypeError('broken');\n", check: runtimeError(1, 'TypeError: broken') },
  { name: 'worker threads and the libuv pool run (UV_THREADPOOL_SIZE=2)', code: THREADS_JS, check: succeeds('workers 4, hashes 256, pool 2\n') },
  {
    // --max-old-space-size: V8 stops at its own limit, under the sandbox's 512 MB, and says why.
    name: 'the V8 heap is limited below the memory limit',
    code: "const v8 = require('node:v8');\nconsole.log(Math.round(v8.getHeapStatistics().heap_size_limit / 2 ** 20) < 450);\n",
    check: succeeds('true\n'),
  },
  {
    name: 'running out of heap is a V8 heap error, not a kill',
    code: 'const keep = [];\nfor (;;) keep.push(new Array(1e6).fill(keep.length));\n',
    check: (r) => {
      expect(r.status, r.error).to.equal('runtime_error');
      expect(r.error).to.contain('JavaScript heap out of memory');
    },
  },
  { name: 'nothing is printed on stderr at start (the CA store exists)', code: "console.log('quiet');\n", check: (r) => (succeeds('quiet\n')(r), expect(r.error).to.equal('')) },
]);

describeCompiler('typescript-4.8', [
  ...recipePrograms('typescript-4.8'),
  {
    name: 'echoes standard input with Node types',
    code: "import { readFileSync } from 'fs';\nconst text: string = readFileSync(0, 'utf8');\nprocess.stdout.write(text);\n",
    input: ECHO_INPUT,
    check: succeeds(ECHO_INPUT),
  },
  { name: 'a type error is compile_error with the message', code: "const n: number = 'text';\nconsole.log(n);\n", check: compileError("main.ts(1,7): error TS2322: Type 'string' is not assignable to type 'number'.") },
  { name: 'a non-zero exit is runtime_error with that exit code', code: "console.error('exiting 4');\nprocess.exit(4);\n", check: runtimeError(4, 'exiting 4') },
  {
    name: 'ES2022 output: class fields and top-level classes run unchanged',
    code: 'class Counter {\n  #n = 0;\n  static made = 0;\n  inc(): number { return ++this.#n; }\n}\nconst c = new Counter();\nc.inc();\nconsole.log(c.inc(), Counter.made, [1, 2, 3].at(-1));\n',
    check: succeeds('2 0 3\n'),
  },
]);

describeCompiler('coffeescript-2.7', [
  ...recipePrograms('coffeescript-2.7'),
  { name: 'echoes standard input', code: "process.stdout.write require('fs').readFileSync(0, 'utf8')\n", input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a syntax error is runtime_error with the message', code: 'x = (1 +\n', check: runtimeError(1, /main\.coffee:\d+:\d+: error/) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: "console.error 'exiting 3'\nprocess.exit 3\n", check: runtimeError(3, 'exiting 3') },
]);
