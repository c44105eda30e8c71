import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';

// Java 11: the file is named after the program's single public class.

describeCompiler('openjdk-11', [
  {
    name: 'hello world: public class Main',
    code: 'public class Main {\n  public static void main(String[] args) {\n    System.out.println("Hello, World!");\n  }\n}\n',
    check: succeeds('Hello, World!\n'),
  },
  {
    name: 'any single public class name',
    code: 'import java.util.*;\n\npublic class Solution {\n  static class Helper { int twice(int v) { return 2 * v; } }\n  public static void main(String[] args) {\n    Runnable r = new Runnable() { public void run() { System.out.println("anonymous"); } };\n    r.run();\n    System.out.println(new Helper().twice(21));\n  }\n}\n',
    check: succeeds('anonymous\n42\n'),
  },
  {
    // Decoded and encoded with the JVM's default charset, which must be UTF-8.
    name: 'echoes standard input (UTF-8)',
    code: 'import java.io.IOException;\n\npublic class Main {\n  public static void main(String[] args) throws IOException {\n    String text = new String(System.in.readAllBytes());\n    System.out.print(text);\n  }\n}\n',
    input: ECHO_INPUT,
    check: succeeds(ECHO_INPUT),
  },
  {
    name: 'Scanner reads numbers',
    code: 'import java.util.Scanner;\n\npublic class Main {\n  public static void main(String[] args) {\n    Scanner sc = new Scanner(System.in);\n    long sum = 0;\n    while (sc.hasNextLong()) sum += sc.nextLong();\n    System.out.println(sum);\n  }\n}\n',
    input: '1 2 3\n4\n',
    check: succeeds('10\n'),
  },
  {
    name: 'a compile error is compile_error with the message',
    code: 'public class Main {\n  public static void main(String[] args) {\n    int x = "text";\n  }\n}\n',
    check: compileError('Main.java:3: error: incompatible types'),
  },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: 'public class Main {\n  public static void main(String[] args) {\n    System.err.println("exiting 7");\n    System.exit(7);\n  }\n}\n',
    check: runtimeError(7, 'exiting 7'),
  },
  {
    name: 'an uncaught exception is runtime_error 1 with the stack trace',
    code: 'public class Main {\n  public static void main(String[] args) {\n    throw new IllegalStateException("broken");\n  }\n}\n',
    check: runtimeError(1, 'java.lang.IllegalStateException: broken'),
  },
  {
    name: 'Java 11: var in lambda parameters',
    code: 'import java.util.function.BiFunction;\n\npublic class Main {\n  public static void main(String[] args) {\n    BiFunction<Integer, Integer, Integer> add = (var a, var b) -> a + b;\n    var text = "sum=" + add.apply(40, 2);\n    System.out.println(text.strip());\n  }\n}\n',
    check: succeeds('sum=42\n'),
  },
  {
    name: '40 threads alive at once run normally',
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
    name: 'a large heap allocation fits the memory limit',
    code: 'public class Main {\n  public static void main(String[] args) {\n    byte[][] blocks = new byte[200][];\n    for (int i = 0; i < blocks.length; i++) { blocks[i] = new byte[1 << 20]; blocks[i][i] = 1; }\n    System.out.println("allocated " + blocks.length + " MiB");\n  }\n}\n',
    check: (r) => (succeeds('allocated 200 MiB\n')(r), expect(r.memory).to.be.above(200 * 1024)),
  },
  {
    name: 'running out of heap is an OutOfMemoryError, not a kill',
    code: 'import java.util.*;\n\npublic class Main {\n  public static void main(String[] args) {\n    List<byte[]> keep = new ArrayList<>();\n    while (true) keep.add(new byte[1 << 20]);\n  }\n}\n',
    check: runtimeError(1, 'java.lang.OutOfMemoryError: Java heap space'),
  },
  {
    // -XX:-UsePerfData: no hsperfdata file in /tmp; -XX:ActiveProcessorCount=2 whatever the host has.
    name: 'the JVM leaves /tmp empty and sees 2 processors',
    code: 'import java.io.File;\n\npublic class Main {\n  public static void main(String[] args) {\n    System.out.println(new File("/tmp").list().length + " " + Runtime.getRuntime().availableProcessors());\n  }\n}\n',
    check: succeeds('0 2\n'),
  },
]);
