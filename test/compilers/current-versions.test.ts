import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Current versions of the contract's languages under ids of their own: Python 3.11,
// GCC 9 (Judge0's and Piston's C and C++ 9.3.0), GCC 12 and Clang 14 for C and C++ at
// their default standards, OpenJDK 17.

const C_ECHO = '#include <stdio.h>\nint main(void) {\n  int c;\n  while ((c = getchar()) != EOF) putchar(c);\n  return 0;\n}\n';
const CPP_ECHO = '#include <iostream>\n#include <iterator>\n#include <string>\nint main() {\n  std::string s{std::istreambuf_iterator<char>(std::cin), {}};\n  std::cout << s;\n}\n';

describeCompiler('python-3.11', [
  ...recipePrograms('python-3.11'),
  { name: 'echoes standard input', code: 'import sys\nsys.stdout.write(sys.stdin.read())\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  {
    // 3.11 points at the failing expression in the traceback.
    name: 'an uncaught exception is runtime_error 1 with a fine-grained traceback',
    code: 'xs = {"a": None}\nprint(xs["a"]["b"])\n',
    check: runtimeError(1, /print\(xs\["a"\]\["b"\]\)\n\s+~+\^+/),
  },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'import sys\nprint("exiting 4", file=sys.stderr)\nsys.exit(4)\n', check: runtimeError(4, 'exiting 4') },
]);

const C_UNDECLARED = { 'gcc-9': 'error: ‘undefined_name’ undeclared', 'gcc-12': 'error: ‘undefined_name’ undeclared', 'clang-14': "error: use of undeclared identifier 'undefined_name'" } as const;
const CPP_NO_STRING = { 'g++-9': 'error: ‘string’ is not a member of ‘std’', 'g++-12': 'error: ‘string’ is not a member of ‘std’', 'clang++-14': "error: use of undeclared identifier 'std'" } as const;

for (const id of ['gcc-9', 'gcc-12', 'clang-14'] as const) {
  describeCompiler(id, [
    ...recipePrograms(id),
    { name: 'echoes standard input', code: C_ECHO, input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
    { name: 'a compile error is compile_error with the message', code: 'int main(void) { return undefined_name; }\n', check: compileError('main.c:1:', C_UNDECLARED[id]) },
    { name: 'a non-zero exit is runtime_error with that exit code', code: '#include <stdio.h>\nint main(void) { fprintf(stderr, "exiting 5\\n"); return 5; }\n', check: runtimeError(5, 'exiting 5') },
    {
      name: 'C17: a declaration in a for-loop header and // comments compile',
      code: '#include <stdio.h>\nint main(void) {\n  // C99 and later\n  for (int i = 0; i < 3; i++) printf("%d", i);\n  printf("\\n");\n  return 0;\n}\n',
      check: succeeds('012\n'),
    },
    {
      // C99 and later: reaching the end of main returns 0 (under gnu89 the status is whatever was left in a register).
      name: 'main without a return exits 0',
      code: '#include <stdio.h>\nint main(void) { puts("done"); }\n',
      check: succeeds('done\n'),
    },
  ]);
}

for (const [id, std] of [['g++-9', 201402], ['g++-12', 201703], ['clang++-14', 201402]] as const) {
  describeCompiler(id, [
    ...recipePrograms(id),
    { name: 'echoes standard input', code: CPP_ECHO, input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
    { name: 'a compile error is compile_error with the message', code: 'int main() { std::string s; return 0; }\n', check: compileError('main.cpp:1:', CPP_NO_STRING[id]) },
    { name: 'an uncaught exception is runtime_error (SIGABRT)', code: '#include <stdexcept>\nint main() { throw std::runtime_error("broken"); }\n', check: (r) => {
      expect(r).to.include({ status: 'runtime_error', exit_code: 134, signal: 6 });
      expect(r.error).to.contain('broken');
    } },
    {
      name: `the default standard is __cplusplus ${std}`,
      code: '#include <iostream>\nint main() { std::cout << __cplusplus << std::endl; }\n',
      check: succeeds(`${std}\n`),
    },
    {
      name: '40 std::threads alive at once run normally',
      code: '#include <atomic>\n#include <iostream>\n#include <thread>\n#include <vector>\nint main() {\n  std::atomic<int> ready{0}, done{0};\n  std::vector<std::thread> ts;\n  for (int i = 0; i < 40; i++) ts.emplace_back([&] { ready++; while (ready < 40) std::this_thread::yield(); done++; });\n  for (auto &t : ts) t.join();\n  std::cout << "threads done: " << done << std::endl;\n}\n',
      check: succeeds('threads done: 40\n'),
    },
  ]);
}

describeCompiler('openjdk-17', [
  ...recipePrograms('openjdk-17'),
  {
    name: 'echoes standard input (UTF-8)',
    code: 'import java.io.*;\nimport java.nio.charset.StandardCharsets;\n\npublic class Main {\n  public static void main(String[] args) throws IOException {\n    System.out.write(System.in.readAllBytes());\n    System.out.flush();\n  }\n}\n',
    input: ECHO_INPUT,
    check: succeeds(ECHO_INPUT),
  },
  {
    name: 'a compile error is compile_error with the message',
    code: 'public class Main {\n  public static void main(String[] args) {\n    int x = "text";\n  }\n}\n',
    check: compileError('Main.java:3: error: incompatible types: String cannot be converted to int'),
  },
  {
    name: 'an uncaught exception is runtime_error 1 with the stack trace',
    code: 'public class Main {\n  public static void main(String[] args) {\n    throw new IllegalStateException("broken");\n  }\n}\n',
    check: runtimeError(1, 'java.lang.IllegalStateException: broken'),
  },
  {
    name: '40 threads alive at once run normally (serial GC, C1 only)',
    code: [
      'import java.util.concurrent.*;',
      'import java.util.concurrent.atomic.AtomicInteger;',
      '',
      'public class Main {',
      '  public static void main(String[] args) throws Exception {',
      '    final int n = 40;',
      '    final CyclicBarrier barrier = new CyclicBarrier(n);',
      '    final AtomicInteger done = new AtomicInteger();',
      '    Thread[] threads = new Thread[n];',
      '    for (int i = 0; i < n; i++) {',
      '      threads[i] = new Thread(() -> {',
      '        try { barrier.await(20, TimeUnit.SECONDS); done.incrementAndGet(); } catch (Exception e) { throw new RuntimeException(e); }',
      '      });',
      '      threads[i].start();',
      '    }',
      '    for (Thread t : threads) t.join();',
      '    System.out.println("threads done: " + done.get());',
      '  }',
      '}',
      '',
    ].join('\n'),
    check: succeeds('threads done: 40\n'),
  },
  {
    name: 'running out of heap is an OutOfMemoryError, not a kill',
    code: 'import java.util.*;\n\npublic class Main {\n  public static void main(String[] args) {\n    List<byte[]> keep = new ArrayList<>();\n    while (true) keep.add(new byte[1 << 20]);\n  }\n}\n',
    check: runtimeError(1, 'java.lang.OutOfMemoryError: Java heap space'),
  },
  {
    name: 'the JVM leaves /tmp empty and sees 2 processors',
    code: 'import java.io.File;\n\npublic class Main {\n  public static void main(String[] args) {\n    System.out.println(new File("/tmp").list().length + " " + Runtime.getRuntime().availableProcessors());\n  }\n}\n',
    check: succeeds('0 2\n'),
  },
]);
