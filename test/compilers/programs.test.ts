import { expect } from 'chai';
import { currentRecipe } from '../../src/images/recipes.js';
import type { RunResult } from '../../src/result.js';
import type { ProgramRequest } from '../../src/program/fields.js';
import { compileError, describeCompiler, succeeds, type Case } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Programs of several files in directories, per language family: each built the way
// its recipe says (src/program/plan.ts), with the files as a request sends them. An
// identifier whose image is not installed pends with the reason.

type Files = Record<string, string>;

/** A case of a program of several files; `main` defaults to the first. */
function program(name: string, files: Files, check: (r: RunResult) => void, more: Omit<ProgramRequest, 'files' | 'code'> = {}, input?: string): Case {
  return {
    name,
    code: '',
    program: { files: Object.entries(files).map(([n, content]) => ({ name: n, content })), ...more },
    ...(input === undefined ? {} : { input }),
    check,
  };
}

const C_LIST_H = '#ifndef LIST_H\n#define LIST_H\nint list_sum(const int *xs, int n);\nint list_max(const int *xs, int n);\n#endif\n';
const C_LIST_C = '#include "lib/list.h"\nint list_sum(const int *xs, int n) {\n  int s = 0, i;\n  for (i = 0; i < n; i++) s += xs[i];\n  return s;\n}\n';
const C_MAX_C = '#include "lib/list.h"\nint list_max(const int *xs, int n) {\n  int m = xs[0], i;\n  for (i = 1; i < n; i++) if (xs[i] > m) m = xs[i];\n  return m;\n}\n';
const C_MAIN =
  '#include <stdio.h>\n#include "lib/list.h"\n#ifndef GREETING\n#define GREETING "sum"\n#endif\nint main(int argc, char **argv) {\n  int xs[] = {3, 9, 4};\n  printf("%s %d, max %d, %d args\\n", GREETING, list_sum(xs, 3), list_max(xs, 3), argc - 1);\n  return 0;\n}\n';
const cProgram: Files = { 'src/main.c': C_MAIN, 'lib/list.h': C_LIST_H, 'lib/list.c': C_LIST_C, 'lib/more/max.c': C_MAX_C };

function cCases(id: string): Case[] {
  return [
    program('C: a header and three units in directories, headers found from the workspace root', cProgram, succeeds('sum 16, max 9, 0 args\n')),
    program('C: args reach the program as argv', cProgram, succeeds('sum 16, max 9, 3 args\n'), { args: ['a b', '', '--x'] }),
    program('C: an allowed compiler option (-D) reaches the compiler', cProgram, succeeds('total 16, max 9, 0 args\n'), { compiler_options: ['-DGREETING="total"', '-O0', '-Wall'] }),
    program(`C: the compiler's messages name the file in its directory (${id})`, { ...cProgram, 'lib/list.c': 'int list_sum(const int *xs, int n) { return undefined_name; }\n' }, compileError('lib/list.c:1:', 'undefined_name')),
  ];
}

const CXX: Files = {
  'main.cpp': '#include <iostream>\n#include "shapes/square.hpp"\nint main() {\n  shapes::Square s(3);\n  std::cout << s.area() << " " << shapes::count() << std::endl;\n  return 0;\n}\n',
  'shapes/square.hpp': '#ifndef SQUARE_HPP\n#define SQUARE_HPP\nnamespace shapes {\nclass Square {\n  int side;\n public:\n  explicit Square(int s);\n  int area() const;\n};\nint count();\n}\n#endif\n',
  'shapes/square.cc': '#include "shapes/square.hpp"\nnamespace shapes {\nSquare::Square(int s) : side(s) {}\nint Square::area() const { return side * side; }\n}\n',
  'shapes/count.cxx': '#include "shapes/square.hpp"\nnamespace shapes { int count() { return 1; } }\n',
};

function cxxCases(): Case[] {
  return [program('C++: a header and .cpp, .cc and .cxx units in directories', CXX, succeeds('9 1\n'))];
}

for (const id of ['gcc-4.9', 'gcc-9', 'gcc-7.4', 'gcc-8.3', 'gcc-12', 'gcc-14', 'clang-14']) describeCompiler(`${id}`, [...(id.includes('.') && id !== 'gcc-4.9' ? recipePrograms(id) : []), ...cCases(id)]);
for (const id of ['g++-4.9', 'g++-9', 'g++-7.4', 'g++-8.3', 'g++-12', 'g++-14', 'clang++-14']) describeCompiler(`${id}`, [...(id.includes('.') && id !== 'g++-4.9' ? recipePrograms(id) : []), ...cxxCases()]);
describeCompiler('g++-9', [
  program('C++: -std=c++17 as a compiler option', { 'main.cpp': '#include <iostream>\nint main() {\n  if constexpr (__cplusplus >= 201703L) std::cout << "17" << std::endl;\n  return 0;\n}\n' }, succeeds('17\n'), { compiler_options: ['-std=c++17'] }),
]);

const PY: Files = {
  'main.py': 'import sys\nfrom geometry import area\nfrom geometry.shapes import Square\nimport helpers\nprint(area(Square(3)), helpers.shout("ok"), sys.argv[1:])\n',
  'geometry/__init__.py': 'def area(shape):\n    return shape.side ** 2\n',
  'geometry/shapes.py': 'class Square:\n    def __init__(self, side):\n        self.side = side\n',
  'helpers.py': 'def shout(s):\n    return s.upper() + "!"\n',
};
for (const id of ['python-3.9.7', 'python-3.11', 'python-3.13']) {
  describeCompiler(id, [
    program('Python: a package and a module beside the main file, args in sys.argv', PY, succeeds("9 OK! ['--n', '2']\n"), { args: ['--n', '2'] }),
    program('Python: a main file in a directory imports a package at the workspace root', { 'app/run.py': 'from geometry import area\nfrom geometry.shapes import Square\nprint(area(Square(4)))\n', ...PY }, succeeds('16\n'), { main: 'app/run.py' }),
  ]);
}

const JAVA: Files = {
  'src/com/example/app/Main.java':
    'package com.example.app;\n\nimport com.example.util.Greeter;\n\npublic class Main {\n  public static void main(String[] args) {\n    System.out.println(new Greeter("Java").greet() + " " + Counter.count(args));\n  }\n}\n',
  'src/com/example/app/Counter.java': 'package com.example.app;\n\nclass Counter {\n  static int count(String[] args) { return args.length; }\n}\n',
  'src/com/example/util/Greeter.java': 'package com.example.util;\n\npublic class Greeter {\n  private final String name;\n  public Greeter(String name) { this.name = name; }\n  public String greet() { return "Hello, " + name; }\n}\n',
};
for (const id of ['openjdk-11', 'openjdk-17', 'openjdk-21']) {
  describeCompiler(id, [
    program('Java: three classes, one per file, in two packages; the main file\'s class runs with its package', JAVA, succeeds('Hello, Java 2\n'), { args: ['x', 'y'] }),
    program('Java: an allowed option (-Xlint) and its warnings', { 'Main.java': 'import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    List l = new ArrayList();\n    l.add("x");\n    System.out.println(l);\n  }\n}\n' }, (r) => {
      succeeds('[x]\n')(r);
      expect(r.compile_output).to.match(/unchecked/);
    }, { compiler_options: ['-Xlint:unchecked'] }),
  ]);
}

describeCompiler('kotlin-1.3', [
  program('Kotlin: files of a package, the main file\'s class (MainKt) runs with its package', {
    'app/Main.kt': 'package app\n\nfun main(args: Array<String>) {\n    println(greet("Kotlin") + " " + args.size)\n}\n',
    'app/Greet.kt': 'package app\n\nfun greet(name: String) = "Hello, $name"\n',
  }, succeeds('Hello, Kotlin 1\n'), { args: ['x'] }),
]);
describeCompiler('scala-2.11', [
  program('Scala: an object per file', {
    'Main.scala': 'object Main {\n  def main(args: Array[String]): Unit = println(Util.twice(21))\n}\n',
    'util/Util.scala': 'object Util {\n  def twice(x: Int): Int = x * 2\n}\n',
  }, succeeds('42\n')),
]);

describeCompiler('dotnet-csharp-5', [
  program('C#: every .cs file, a namespace in a directory', {
    'Program.cs': 'using System;\nusing Shapes;\nclass Program {\n  static void Main(string[] args) {\n    Console.WriteLine(new Square(3).Area() + " " + args.Length);\n  }\n}\n',
    'Shapes/Square.cs': 'namespace Shapes {\n  public class Square {\n    private readonly int side;\n    public Square(int side) { this.side = side; }\n    public int Area() => side * side;\n  }\n}\n',
  }, succeeds('9 2\n'), { args: ['a', 'b'], compiler_options: ['-optimize+'] }),
]);
describeCompiler('dotnet-fsharp-5', [
  program('F#: the other files first, the main file last', {
    'Program.fs': 'open Shapes\n[<EntryPoint>]\nlet main argv =\n    printfn "%d" (area 3)\n    0\n',
    'Shapes.fs': 'module Shapes\nlet area side = side * side\n',
  }, succeeds('9\n')),
]);
describeCompiler('dotnet-vb-10', [
  program('VB: every .vb file', {
    'Program.vb': 'Module Program\n  Sub Main()\n    System.Console.WriteLine(Helper.Twice(21))\n  End Sub\nEnd Module\n',
    'Helper.vb': 'Public Module Helper\n  Public Function Twice(x As Integer) As Integer\n    Return x * 2\n  End Function\nEnd Module\n',
  }, succeeds('42\n')),
]);

describeCompiler('go-1.19', [
  program('Go: a module with a package in a directory', {
    'main.go': 'package main\n\nimport (\n\t"fmt"\n\t"os"\n\n\t"example.com/hello/greet"\n)\n\nfunc main() {\n\tfmt.Println(greet.Hello("Go"), len(os.Args)-1)\n}\n',
    'go.mod': 'module example.com/hello\n\ngo 1.19\n',
    'greet/greet.go': 'package greet\n\nfunc Hello(name string) string { return "Hello, " + name }\n',
  }, succeeds('Hello, Go 1\n'), { args: ['x'] }),
  program('Go: the main package of several files, without a module', {
    'main.go': 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println(twice(21)) }\n',
    'util.go': 'package main\n\nfunc twice(x int) int { return x * 2 }\n',
  }, succeeds('42\n')),
]);

for (const id of ['rust-1.63', 'rust-1.85']) {
  describeCompiler(id, [
    program('Rust: the main file and its modules, a directory module too', {
      'main.rs': 'mod geometry;\nmod util;\n\nfn main() {\n    let args: Vec<String> = std::env::args().skip(1).collect();\n    println!("{} {}", geometry::area(3), util::shout(&args[0]));\n}\n',
      'geometry/mod.rs': 'pub fn area(side: u32) -> u32 { side * side }\n',
      'util.rs': 'pub fn shout(s: &str) -> String { s.to_uppercase() }\n',
    }, succeeds('9 HI\n'), { args: ['hi'], compiler_options: ['-Copt-level=1'] }),
  ]);
}

describeCompiler('nodejs-18', [
  program('Node: require of a module in a directory', {
    'main.js': "const { add } = require('./lib/math');\nconsole.log(add(2, 3), process.argv.slice(2).join(','));\n",
    'lib/math.js': 'exports.add = (a, b) => a + b;\n',
  }, succeeds('5 a,b\n'), { args: ['a', 'b'] }),
  program('Node: ES modules (import)', {
    'main.mjs': "import { twice } from './lib/twice.mjs';\nconsole.log(twice(21));\n",
    'lib/twice.mjs': 'export const twice = (x) => x * 2;\n',
  }, succeeds('42\n')),
]);
describeCompiler('nodejs-20', [
  program('Node: ES modules (import)', {
    'main.mjs': "import { twice } from './lib/twice.mjs';\nconsole.log(twice(21));\n",
    'lib/twice.mjs': 'export const twice = (x) => x * 2;\n',
  }, succeeds('42\n')),
]);
describeCompiler('typescript-4.8', [
  program('TypeScript: every .ts file compiled, the main file run', {
    'main.ts': "import { add } from './lib/add';\nconst n: number = add(20, 22);\nconsole.log(n);\n",
    'lib/add.ts': 'export function add(a: number, b: number): number { return a + b; }\n',
  }, succeeds('42\n'), { compiler_options: ['--strict'] }),
]);

const RUBY: Files = {
  'main.rb': "require_relative 'lib/greeter'\nrequire 'helpers'\nputs Greeter.new('Ruby').greet + ' ' + Helpers.shout(ARGV.first)\n",
  'lib/greeter.rb': "class Greeter\n  def initialize(name)\n    @name = name\n  end\n\n  def greet\n    \"Hello, #{@name}\"\n  end\nend\n",
  'helpers.rb': 'module Helpers\n  def self.shout(s)\n    s.upcase\n  end\nend\n',
};
for (const id of ['ruby-3.0.2', 'ruby-3.3']) describeCompiler(id, [program('Ruby: require_relative and require from the workspace', RUBY, succeeds('Hello, Ruby HI\n'), { args: ['hi'] })]);

const PHP: Files = {
  'main.php': "<?php\nrequire __DIR__ . '/lib/util.php';\ninclude 'helpers.php';\necho twice(21), ' ', shout($argv[1]), \"\\n\";\n",
  'lib/util.php': '<?php\nfunction twice($x) { return $x * 2; }\n',
  'helpers.php': '<?php\nfunction shout($s) { return strtoupper($s); }\n',
};
for (const id of ['php-8.1', 'php-8.4']) describeCompiler(id, [program('PHP: require and include of files in the workspace', PHP, succeeds('42 HI\n'), { args: ['hi'] })]);

describeCompiler('perl-5.36', [
  program('Perl: use of modules from lib/ and the workspace', {
    'main.pl': "use strict;\nuse warnings;\nuse lib 'lib';\nuse Greeter;\nuse Helper;\nprint Greeter::greet('Perl'), ' ', Helper::shout($ARGV[0]), \"\\n\";\n",
    'lib/Greeter.pm': "package Greeter;\nsub greet { return 'Hello, ' . shift; }\n1;\n",
    'Helper.pm': 'package Helper;\nsub shout { return uc shift; }\n1;\n',
  }, succeeds('Hello, Perl HI\n'), { args: ['hi'] }),
]);
describeCompiler('lua-5.4', [
  program('Lua: require of a module in a directory', {
    'main.lua': "local m = require('lib.mathx')\nprint(m.twice(21), arg[1])\n",
    'lib/mathx.lua': 'local M = {}\nfunction M.twice(x) return x * 2 end\nreturn M\n',
  }, succeeds('42\thi\n'), { args: ['hi'] }),
]);
describeCompiler('bash-5.2', [
  program('Bash: source of a file in a directory, args', { 'main.sh': 'source lib/util.sh\ngreet "$@"\n', 'lib/util.sh': 'greet() { echo "Hello, $1 ($#)"; }\n' }, succeeds('Hello, Bash (2)\n'), { args: ['Bash', 'x'] }),
]);

/** The recipe's links (Judge0's install paths): each program among them runs, each directory is one. */
function linksCase(image: string): Case {
  const paths = Object.keys(currentRecipe(image)?.links ?? {});
  const isProgram = (p: string) => p.split('/').at(-2) === 'bin';
  const code = paths.map((p) => (isProgram(p) ? `"${p}" --version > /dev/null 2>&1 && echo "runs ${p}"\n` : `test -d "${p}" && echo "directory ${p}"\n`)).join('');
  const output = paths.map((p) => `${isProgram(p) ? 'runs' : 'directory'} ${p}\n`).join('');
  return { name: `the links at Judge0's install paths (${paths.length}) lead to the image's toolchains`, code, check: succeeds(output) };
}

describeCompiler('multi-file', [
  ...recipePrograms('multi-file'),
  linksCase('multi-file'),
  program('the compile script builds, the run script runs what it built (arguments and options passed)', {
    run: './app "$@"\n',
    compile: 'gcc -DWHO=\'"gcc"\' "$@" -o app main.c util.c\n',
    'main.c': '#include <stdio.h>\nint twice(int);\nint main(int argc, char **argv) { printf("%d %s %d\\n", twice(21), WHO, argc - 1); return 0; }\n',
    'util.c': 'int twice(int x) { return x * 2; }\n',
  }, succeeds('42 gcc 2\n'), { args: ['a', 'b'], compiler_options: ['-O2', '-Wall'] }),
]);

// A plot a program saves under /box/out/ comes back as a file of its result (return_files).
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const returnsPng = (name: string) => (r: RunResult) => {
  expect(r.status, r.error).to.equal('success');
  const files = (r as RunResult & { files: { name: string; mime: string; size: number; content: string }[] }).files;
  expect(files.map((x) => [x.name, x.mime])).to.deep.equal([[name, 'image/png']]);
  const bytes = Buffer.from(files[0]!.content, 'base64');
  expect(bytes.length).to.equal(files[0]!.size);
  expect(bytes.subarray(0, 8).equals(PNG_SIGNATURE)).to.equal(true);
};
describeCompiler('python-3.13', [
  {
    name: 'matplotlib: a figure saved to out/plot.png comes back as a PNG file',
    code: "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot([0, 1, 2], [0, 1, 4])\nfig.savefig('out/plot.png')\n",
    program: { return_files: true },
    check: returnsPng('plot.png'),
  },
]);
describeCompiler('r-4.2', [
  {
    name: 'ggplot2: a plot saved to out/plot.png comes back as a PNG file',
    code: "suppressPackageStartupMessages(library(ggplot2))\np <- ggplot(data.frame(x = 1:5, y = (1:5)^2), aes(x, y)) + geom_line()\nggsave('out/plot.png', p, width = 3, height = 2, dpi = 72)\n",
    program: { return_files: true },
    check: returnsPng('plot.png'),
  },
]);
