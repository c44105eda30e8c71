import { compileError, describeCompiler, succeeds } from './harness.js';

// The class a JVM program runs is the one its sources declare the entry point in (the
// recipe's entry), whatever the files are called, as DOMjudge and Kattis run it: a
// program without one is a compile error that says what is missing.

const HELLO_JAVA = 'import java.io.*;\n\nclass Main {\n  public static void main(String[] args) throws Exception {\n    System.out.print("Hello world!\\n");\n  }\n}\n';

for (const id of ['openjdk-11', 'openjdk-17', 'openjdk-21']) {
  describeCompiler(id, [
    {
      // DOMjudge's example submission extra-file-java: test-hello.java with a random extra file.
      name: "runs the class that declares main, whatever its file is called (DOMjudge's extra-file-java)",
      code: '',
      program: { files: [{ name: 'test-hello.java', content: HELLO_JAVA }, { name: 'zz-random.txt', content: 'random\n' }] },
      check: succeeds('Hello world!\n'),
    },
    {
      name: 'runs a nested class in a package by its binary name, from a file other than the main one',
      code: '',
      program: {
        files: [
          { name: 'src/util/Text.java', content: 'package util;\npublic class Text { public static String shout(String s) { return s.toUpperCase(); } }\n' },
          { name: 'src/app/Outer.java', content: 'package app;\npublic class Outer {\n  static class Inner {\n    public static void main(String[] args) { System.out.println(util.Text.shout("nested")); }\n  }\n}\n' },
        ],
      },
      check: succeeds('NESTED\n'),
    },
    {
      name: 'a program with no main is a compile error naming what is missing',
      code: 'public class Main {\n  // public static void main(String[] args) {}\n  static int f() { return 1; }\n}\n',
      check: compileError('no class declares public static void main(String[] args)'),
    },
  ]);
}

describeCompiler('kotlin-1.3', [
  {
    name: 'runs the file with the top-level fun main, whatever the main file is',
    code: '',
    program: { files: [{ name: 'util.kt', content: 'fun twice(n: Int) = 2 * n\n' }, { name: 'solve-it.kt', content: 'fun main() {\n    println(twice(21))\n}\n' }] },
    check: succeeds('42\n'),
  },
  { name: 'a program with no top-level fun main is a compile error naming what is missing', code: 'class A {\n    fun main() {}\n}\n', check: compileError('no file declares a top-level fun main()') },
]);

describeCompiler('scala-2.11', [
  { name: 'runs the object with a main, not only object Main', code: 'object Solution {\n  def main(args: Array[String]): Unit = println("solved")\n}\n', check: succeeds('solved\n') },
  { name: 'runs an object that extends App', code: 'object Hello extends App {\n  println("app")\n}\n', check: succeeds('app\n') },
  { name: 'a program with no object with a main is a compile error naming what is missing', code: 'class C {\n  def main(args: Array[String]): Unit = ()\n}\n', check: compileError('no object has a main method') },
]);
