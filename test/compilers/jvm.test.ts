import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Kotlin, Groovy, Scala and Clojure on the jvm image (OpenJDK 17), every JVM with the
// options of openjdk-17: serial GC, C1 only, a 384 MB heap, 2 processors, no perf data.

/** Threads and the heap limit, the same program in each language's words. */
const JVM_SETTINGS = 'the JVM sees 2 processors, leaves /tmp empty and runs 40 threads';
const jvmSettings = succeeds('2 0 40\n');
const outOfHeap = runtimeError(1, 'java.lang.OutOfMemoryError: Java heap space');

describeCompiler('kotlin-1.3', [
  ...recipePrograms('kotlin-1.3'),
  { name: 'echoes standard input', code: 'fun main() {\n    print(System.`in`.readBytes().toString(Charsets.UTF_8))\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'reads numbers with readLine', code: 'fun main() {\n    val (a, b) = readLine()!!.split(" ").map { it.toInt() }\n    println(a + b)\n}\n', input: '40 2\n', check: succeeds('42\n') },
  { name: 'a compile error is compile_error with the message', code: 'fun main() {\n    val x: Int = "text"\n}\n', check: compileError(/main\.kt:2:18: error: type mismatch/) },
  { name: 'an uncaught exception is runtime_error 1 with the stack trace', code: 'fun main() {\n    throw IllegalStateException("broken")\n}\n', check: runtimeError(1, 'java.lang.IllegalStateException: broken') },
  {
    name: JVM_SETTINGS,
    code: 'fun main() {\n    val threads = (1..40).map { Thread { Thread.sleep(50) }.apply { start() } }\n    threads.forEach { it.join() }\n    println("${Runtime.getRuntime().availableProcessors()} ${java.io.File("/tmp").list()!!.size} ${threads.size}")\n}\n',
    check: jvmSettings,
  },
  { name: 'running out of heap is an OutOfMemoryError, not a kill', code: 'fun main() {\n    val keep = ArrayList<ByteArray>()\n    while (true) keep.add(ByteArray(1 shl 20))\n}\n', check: outOfHeap },
]);

describeCompiler('groovy-2.4', [
  ...recipePrograms('groovy-2.4'),
  { name: 'echoes standard input', code: 'print System.in.getText("UTF-8")\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a syntax error is runtime_error 1 with the message', code: 'def x = (1 + \n', check: runtimeError(1, /main\.groovy: 1: expecting '\)', found '\+' @ line 1, column 12/) },
  { name: 'an uncaught exception is runtime_error 1 with the message', code: 'throw new IllegalStateException("broken")\n', check: runtimeError(1, 'java.lang.IllegalStateException: broken') },
  {
    name: JVM_SETTINGS,
    code: 'def threads = (1..40).collect { Thread.start { Thread.sleep(50) } }\nthreads*.join()\nprintln "${Runtime.runtime.availableProcessors()} ${new File("/tmp").list().length} ${threads.size()}"\n',
    check: jvmSettings,
  },
  { name: 'running out of heap is an OutOfMemoryError, not a kill', code: 'def keep = []\nwhile (true) keep << new byte[1 << 20]\n', check: outOfHeap },
]);

describeCompiler('scala-2.11', [
  ...recipePrograms('scala-2.11'),
  { name: 'echoes standard input', code: 'object Main extends App {\n  print(scala.io.Source.stdin.mkString)\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'object Main extends App {\n  val x: Int = "text"\n}\n', check: compileError(/main\.scala:2: error: type mismatch/) },
  { name: 'an uncaught exception is runtime_error 1 with the stack trace', code: 'object Main {\n  def main(args: Array[String]): Unit = throw new IllegalStateException("broken")\n}\n', check: runtimeError(1, 'java.lang.IllegalStateException: broken') },
  {
    name: JVM_SETTINGS,
    code: 'object Main extends App {\n  val threads = (1 to 40).map { _ => val t = new Thread(new Runnable { def run(): Unit = Thread.sleep(50) }); t.start(); t }\n  threads.foreach(_.join())\n  println(s"${Runtime.getRuntime.availableProcessors} ${new java.io.File("/tmp").list().length} ${threads.size}")\n}\n',
    check: jvmSettings,
  },
  { name: 'running out of heap is an OutOfMemoryError, not a kill', code: 'object Main extends App {\n  val keep = scala.collection.mutable.ArrayBuffer[Array[Byte]]()\n  while (true) keep += new Array[Byte](1 << 20)\n}\n', check: outOfHeap },
]);

describeCompiler('clojure-1.11', [
  ...recipePrograms('clojure-1.11'),
  { name: 'echoes standard input', code: '(print (slurp *in*))\n(flush)\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an uncaught exception is runtime_error 1 with the message', code: '(throw (IllegalStateException. "broken"))\n', check: runtimeError(1, 'broken') },
  {
    name: JVM_SETTINGS,
    code: '(let [fs (doall (for [_ (range 40)] (future (Thread/sleep 50) 1)))]\n  (println (.availableProcessors (Runtime/getRuntime)) (count (.list (java.io.File. "/tmp"))) (reduce + (map deref fs))))\n(shutdown-agents)\n',
    check: jvmSettings,
  },
  {
    name: 'running out of heap is an OutOfMemoryError, not a kill',
    code: '(loop [keep []] (recur (conj keep (byte-array (bit-shift-left 1 20)))))\n',
    check: runtimeError(1, /Execution error \(OutOfMemoryError\) at user\/eval\d+ \(main\.clj:1\)\.\nJava heap space/),
  },
]);

