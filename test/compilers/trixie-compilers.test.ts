import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Current compilers from Debian trixie on the trixie-compilers image: GCC 14 at its
// default standards, OpenJDK 21 with openjdk-17's options, Rust 1.85 with edition 2024.

const C_ECHO = '#include <stdio.h>\nint main(void) {\n  int c;\n  while ((c = getchar()) != EOF) putchar(c);\n  return 0;\n}\n';
const CPP_ECHO = '#include <iostream>\n#include <iterator>\n#include <string>\nint main() {\n  std::string s{std::istreambuf_iterator<char>(std::cin), {}};\n  std::cout << s;\n}\n';

describeCompiler('gcc-14', [
  ...recipePrograms('gcc-14'),
  { name: 'echoes standard input', code: C_ECHO, input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  // GCC 14 made implicit function declarations an error.
  { name: 'an implicit function declaration is a compile error (GCC 14)', code: 'int main(void) { return undeclared_function(); }\n', check: compileError('main.c:1:', 'implicit declaration of function ‘undeclared_function’') },
  { name: 'a non-zero exit is runtime_error with that exit code', code: '#include <stdio.h>\nint main(void) { fprintf(stderr, "exiting 5\\n"); return 5; }\n', check: runtimeError(5, 'exiting 5') },
]);

describeCompiler('g++-14', [
  ...recipePrograms('g++-14'),
  { name: 'echoes standard input', code: CPP_ECHO, input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'int main() { std::string s; }\n', check: compileError('main.cpp:1:', '‘string’ is not a member of ‘std’') },
  { name: 'an uncaught exception is runtime_error (SIGABRT)', code: '#include <stdexcept>\nint main() { throw std::runtime_error("broken"); }\n', check: (r) => (expect(r).to.include({ status: 'runtime_error', exit_code: 134, signal: 6 }), expect(r.error).to.contain("what():  broken")) },
]);

describeCompiler('openjdk-21', [
  ...recipePrograms('openjdk-21'),
  { name: 'echoes standard input (UTF-8)', code: 'public class Main {\n  public static void main(String[] args) throws Exception {\n    System.out.print(new String(System.in.readAllBytes()));\n  }\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'public class Main {\n  public static void main(String[] args) {\n    int x = "text";\n  }\n}\n', check: compileError('Main.java:3: error: incompatible types') },
  { name: 'an uncaught exception is runtime_error 1 with the stack trace', code: 'public class Main {\n  public static void main(String[] args) {\n    throw new IllegalStateException("broken");\n  }\n}\n', check: runtimeError(1, 'java.lang.IllegalStateException: broken') },
  {
    name: '10000 virtual threads and 40 platform threads run, on 2 processors, with /tmp left empty',
    code: 'import java.util.concurrent.*;\nimport java.util.concurrent.atomic.AtomicInteger;\n\npublic class Main {\n  public static void main(String[] args) throws Exception {\n    AtomicInteger n = new AtomicInteger();\n    try (var ex = Executors.newVirtualThreadPerTaskExecutor()) {\n      for (int i = 0; i < 10000; i++) ex.submit(() -> { Thread.sleep(10); return n.incrementAndGet(); });\n    }\n    Thread[] ts = new Thread[40];\n    for (int i = 0; i < ts.length; i++) { ts[i] = new Thread(() -> { try { Thread.sleep(50); } catch (InterruptedException e) {} n.incrementAndGet(); }); ts[i].start(); }\n    for (Thread t : ts) t.join();\n    System.out.println(n.get() + " " + Runtime.getRuntime().availableProcessors() + " " + new java.io.File("/tmp").list().length);\n  }\n}\n',
    check: succeeds('10040 2 0\n'),
  },
  { name: 'running out of heap is an OutOfMemoryError, not a kill', code: 'import java.util.*;\n\npublic class Main {\n  public static void main(String[] args) {\n    List<byte[]> keep = new ArrayList<>();\n    while (true) keep.add(new byte[1 << 20]);\n  }\n}\n', check: runtimeError(1, 'java.lang.OutOfMemoryError: Java heap space') },
]);

describeCompiler('rust-1.85', [
  ...recipePrograms('rust-1.85'),
  { name: 'echoes standard input', code: 'use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n    print!("{s}");\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'fn main() {\n    let x: i32 = "text";\n}\n', check: compileError('error[E0308]: mismatched types', 'main.rs:2:18') },
  { name: 'a panic is runtime_error 101 with the message', code: 'fn main() {\n    panic!("broken");\n}\n', check: runtimeError(101, 'broken') },
  { name: 'threads run (std::thread::scope)', code: 'fn main() {\n    let total: u64 = std::thread::scope(|s| {\n        let hs: Vec<_> = (0..8u64).map(|i| s.spawn(move || i * 10)).collect();\n        hs.into_iter().map(|h| h.join().unwrap()).sum()\n    });\n    println!("{total}");\n}\n', check: succeeds('280\n') },
]);
