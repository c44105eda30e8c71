import { expect } from 'chai';
import { catalogue } from '../../src/compilers/catalogue.js';
import { PROGRAM_LIMITS } from '../../src/limits.js';
import { neverAllowed, optionsProblem } from '../../src/program/compiler-options.js';
import { extensionOf, nameConflict, pathProblem } from '../../src/program/paths.js';
import { notAnOption, planProgram, syntaxChecked } from '../../src/program/plan.js';
import { ProgramError, readProgram } from '../../src/program/program.js';

// A request's program: the rules of its files' names, its compiler options against the
// recipes' allowed forms, its limits, and the stages a recipe plans for it.

const entries = [...catalogue('').entries.values()];
const entry = (id: string) => entries.find((e) => e.id === id)!;

function refusal(fn: () => unknown): ProgramError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ProgramError) return err;
    throw err;
  }
  throw new Error('not refused');
}

describe('program: file names', () => {
  it('takes relative paths with directories; refuses absolute, dot-dot, dot-only, empty segments, odd characters, out/', () => {
    for (const good of ['main.c', 'src/util/Parser.java', 'include/list.h', 'pkg/__init__.py', '.env', 'a+b-c_d.txt', 'outline/x', 'x'.repeat(255)]) {
      expect(pathProblem(good), good).to.equal(undefined);
    }
    const cases: [string, RegExp][] = [
      ['', /empty/],
      ['/etc/x', /relative/],
      ['../x', /\.\./],
      ['a/../x', /\.\./],
      ['./x', /dots only/],
      ['a//b', /empty segment/],
      ['a/', /empty segment/],
      ['a b', /letters, digits/],
      ['a\\b', /letters, digits/],
      ['é.py', /letters, digits/],
      ['out', /out/],
      ['out/x', /out/],
      ['x'.repeat(256), /256 bytes long; at most 255/],
    ];
    for (const [bad, why] of cases) expect(pathProblem(bad), bad).to.match(why);
  });

  it('refuses a name given twice and a file that is another one\'s directory', () => {
    expect(nameConflict(['a', 'b', 'a'])).to.deep.equal({ index: 2, problem: 'a is given to files.0 too' });
    expect(nameConflict(['a', 'a/b'])).to.deep.equal({ index: 1, problem: 'a is a file (files.0), not a directory' });
    expect(nameConflict(['a/b', 'a'])).to.deep.equal({ index: 1, problem: 'a is a directory of files.0' });
    expect(nameConflict(['a/b', 'a/c', 'b'])).to.equal(undefined);
  });
});

describe('program: a request read', () => {
  const c = entry('gcc-9');
  const py = entry('python-3.9.7');
  const file = (name: string, content = 'x') => ({ name, content });

  it('stores the main file as code and the others beside it; main defaults to the first', () => {
    const p = readProgram({ files: [file('src/main.c', 'int main(){}'), file('lib/a.h'), { name: 'data.bin', content: 'AAEC', encoding: 'base64' }] }, c);
    expect(p.code).to.equal('int main(){}');
    expect(p.options).to.deep.equal({ main: 'src/main.c', files: [{ name: 'lib/a.h', content_base64: 'eA==' }, { name: 'data.bin', content_base64: 'AAEC' }] });
    expect(readProgram({ files: [file('a.py', 'a'), file('b.py', 'b')], main: 'b.py' }, py).code).to.equal('b');
  });

  it('names what is wrong: both or neither of code and files, main, sizes, counts, encodings', () => {
    expect(refusal(() => readProgram({ code: 'x', files: [file('a')] }, py)).message).to.equal('files: give either code or files, not both');
    expect(refusal(() => readProgram({}, py)).message).to.match(/^code: missing required field code \(or files\)/);
    expect(refusal(() => readProgram({ files: [file('a')], main: 'b' }, py)).message).to.equal('main: no file of files is named "b"');
    expect(refusal(() => readProgram({ files: Array.from({ length: 101 }, (_, i) => file(`f${i}`)) }, py)).message).to.equal('files: at most 100 files (got 101)');
    const big = { name: 'big.bin', content: Buffer.alloc(PROGRAM_LIMITS.filesMaxBytes).toString('base64'), encoding: 'base64' as const };
    expect(refusal(() => readProgram({ files: [file('m.py', 'p'), big] }, py)).message).to.equal('files: the files hold 1,000,001 bytes together; at most 1,000,000');
    expect(refusal(() => readProgram({ files: [file('m.py'), { name: 'x', content: 'not base64!', encoding: 'base64' }] }, py)).message).to.match(/^files\.1\.content: is not Base64/);
    expect(refusal(() => readProgram({ files: [{ name: 'm.py', content: '/w==', encoding: 'base64' }] }, py)).message).to.match(/^files\.0\.content: is not UTF-8 text: it is the main file/);
    expect(refusal(() => readProgram({ files: [file('m.py', 'a\u0000b')] }, py)).message).to.match(/^files\.0\.content: must not contain NUL/);
    expect(refusal(() => readProgram({ files: [file('m.py'), file('../x')] }, py)).message).to.equal('files.1.name: "../x" must not contain ..');
    expect(refusal(() => readProgram({ code: 'x', args: Array.from({ length: 65 }, () => 'a') }, py)).message).to.equal('args: at most 64 arguments (got 65)');
    expect(refusal(() => readProgram({ code: 'x', args: ['x'.repeat(4097)] }, py)).message).to.equal('args.0: is 4,097 bytes; at most 4,096');
  });

  it('checks limits against the service\'s and the floors; a CPU time gives the wall limit 1.5 × time + 1 s (a 10 s sleep under 5 s is stopped)', () => {
    expect(readProgram({ code: 'x', limits: { time: 1.5, memory: 65536 } }, py).options.run).to.deep.equal({ cpu_ms: 1500, timeout_ms: 3250, memory_bytes: 64 * 1024 * 1024 });
    expect(readProgram({ code: 'x', limits: { time: 1 } }, py).options.run).to.deep.equal({ cpu_ms: 1000, timeout_ms: 2500 });
    expect(readProgram({ code: 'x', limits: { time: 5 } }, py).options.run).to.deep.equal({ cpu_ms: 5000, timeout_ms: 8500 });
    expect(readProgram({ code: 'x', limits: { time: 20, wall_time: 2 } }, py).options.run).to.deep.equal({ cpu_ms: 20000, timeout_ms: 2000 });
    expect(readProgram({ code: 'x', limits: { time: 20 } }, py).options.run).to.deep.equal({ cpu_ms: 20000, timeout_ms: 30000 });
    expect(refusal(() => readProgram({ code: 'x', limits: { time: 31 } }, py)).message).to.equal("limits.time: at most 30 seconds (the service's limit); got 31");
    expect(refusal(() => readProgram({ code: 'x', limits: { wall_time: 0.05 } }, py)).message).to.equal('limits.wall_time: at least 0.1 seconds; got 0.05');
    expect(refusal(() => readProgram({ code: 'x', limits: { memory: 600000 } }, py)).message).to.equal("limits.memory: at most 524,288 KB (the service's limit); got 600,000");
    expect(refusal(() => readProgram({ code: 'x', limits: { memory: 1000 } }, py)).message).to.equal('limits.memory: at least 32,768 KB; got 1,000');
  });
});

describe('program: compiler options', () => {
  // What no recipe may let through, whatever its forms: paths, response files, the
  // output, plugins, wrappers, specs, options passed on to other programs.
  const DANGEROUS = [
    '-o', '-o/tmp/x', '-o.', '@args.txt', '-B/tmp', '-Bprefix', '-specs=x', '--specs=x', '-wrapper', '-fplugin=x.so', '-fplugin-arg-x',
    '-I/etc', '-include/etc/passwd', '-L/tmp', '-Wl,-rpath,/tmp', '-Wa,-o', '-Xlinker', '-J-javaagent:x', '-Xplugin:x',
    '-DX=/etc/passwd', '--sysroot=/', '-isystem/x', '-Clinker=/bin/sh', '-Clink-arg=-x', '--out-dir=x', '--emit=link=x', '-out:x.dll', '--out:x',
  ];

  it('no recipe allows a dangerous form, and the never-allowed list names why', () => {
    for (const d of DANGEROUS) expect(neverAllowed(d), d).to.be.a('string');
    for (const e of entries) {
      for (const d of DANGEROUS) expect(optionsProblem(e.id, e, [d]), `${e.id} ${d}`).to.not.equal(undefined);
    }
  });

  it('the usual options pass where the recipe allows them', () => {
    const ok: [string, string[]][] = [
      ['gcc-9', ['-O2', '-O0', '-Os', '-std=c11', '-std=gnu99', '-DDEBUG', '-DN=10', '-Wall', '-Wextra', '-Werror', '-Wno-unused-variable', '-g', '-lm', '-lpthread', '-pedantic', '-fsanitize=address']],
      ['g++-9', ['-std=c++17', '-std=gnu++20', '-O3', '-fno-exceptions']],
      ['openjdk-17', ['-Xlint', '-Xlint:unchecked,deprecation', '--release=11', '-g', '-nowarn']],
      ['rust-1.63', ['-O', '-Copt-level=2', '--edition=2018', '-Dwarnings']],
      ['dotnet-csharp-5', ['-optimize+', '-checked', '-langversion:latest', '-define:DEBUG']],
      ['dotnet-vb-10', ['-optionstrict+', '-optimize-']],
      ['go-1.19', ['-trimpath']],
      ['typescript-4.8', ['--strict']],
    ];
    for (const [id, options] of ok) expect(optionsProblem(id, entry(id), options), id).to.equal(undefined);
  });

  it('a refused option is named with the forms the compiler allows; an interpreter takes none', () => {
    const bad = optionsProblem('gcc-9', entry('gcc-9'), ['-O2', '-frobnicate']);
    expect(bad?.index).to.equal(1);
    expect(bad?.message).to.match(/^"-frobnicate" is not allowed; gcc-9 allows -std=… \(c or gnu, then 89, /);
    expect(optionsProblem('gcc-9', entry('gcc-9'), ['-o/tmp/x'])?.message).to.match(/^"-o\/tmp\/x" is never allowed: it names a path; gcc-9 allows/);
    expect(optionsProblem('python-3.9.7', entry('python-3.9.7'), ['-O'])?.message).to.equal('python-3.9.7 has no compile stage: compiler options do not apply to it');
    expect(optionsProblem('gcc-9', entry('gcc-9'), Array.from({ length: 33 }, () => '-g'))?.message).to.equal('at most 32 compiler options (got 33)');
  });
});

describe('program: the stages a recipe plans', () => {
  it('{sources} is every file of the recipe\'s extensions and the main file, sorted; headers are not compiled', () => {
    const plan = planProgram(entry('gcc-9'), {
      code: 'int main(){}',
      run_options: { main: 'src/main.c', files: ['lib/b.c', 'lib/a.h', 'a.c', 'notes.txt'].map((name) => ({ name, content_base64: '' })), compiler_options: ['-O0'], args: ['x y'] },
    });
    expect(plan.compile!.argv).to.deep.equal(['/usr/bin/gcc-9', '-O2', '-pipe', '-pthread', '-I.', '-o', 'main', 'a.c', 'lib/b.c', 'src/main.c', '-O0', '-lm']);
    expect(plan.compile!.collect).to.deep.equal(['main']);
    expect(plan.run.argv).to.deep.equal(['./main', 'x y']);
    expect(plan.run.dirs).to.deep.equal(['out']);
    expect(plan.files.map((f) => f.name)).to.deep.equal(['src/main.c', 'lib/b.c', 'lib/a.h', 'a.c', 'notes.txt']);
  });

  it('a program sent as code builds as before: the recipe\'s source name, no options', () => {
    const plan = planProgram(entry('gcc-4.9'), { code: 'int main(){}' });
    expect(plan.compile!.argv).to.deep.equal(['/usr/bin/gcc-9', '-std=gnu89', '-O2', '-pipe', '-I.', '-o', 'main', 'main.c', '-lm']);
    expect(planProgram(entry('python-3.9.7'), { code: 'print(1)' }).run.argv).to.deep.equal(['/usr/bin/python3.9', 'main.py']);
  });

  it("Java runs the main file's class with the package it declares (comments and strings do not count)", () => {
    const code = '/* package fake; */\n// package nope;\npackage com.example.app;\npublic class App { String s = "package str;"; }\n';
    const plan = planProgram(entry('openjdk-17'), { code, run_options: { main: 'src/com/example/app/App.java', files: [{ name: 'src/com/example/Util.java', content_base64: '' }] } });
    expect(plan.compile!.argv.slice(-3)).to.deep.equal(['classes', 'src/com/example/Util.java', 'src/com/example/app/App.java']);
    expect(plan.compile!.collect).to.deep.equal(['classes/']);
    expect(plan.run.argv.slice(-3)).to.deep.equal(['-cp', 'classes', 'com.example.app.App']);
    // Sent as code with one public class: the file is named after it, no package.
    expect(planProgram(entry('openjdk-17'), { code: 'public class Solution {}' }).run.argv.slice(-1)).to.deep.equal(['Solution']);
  });

  it("Java runs the class that declares public static void main, whatever its file is called, in its package, nested classes by their binary name", () => {
    const java = entry('openjdk-17');
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const last = (code: string, run_options?: Parameters<typeof planProgram>[1]['run_options']) => planProgram(java, { code, ...(run_options ? { run_options } : {}) });
    // DOMjudge's extra-file-java: test-hello.java holds class Main.
    const hello = last('import java.io.*;\n\nclass Main {\n  public static void main(String[] args) throws Exception {\n    System.out.print("Hello world!\\n");\n  }\n}', { main: 'test-hello.java', files: [{ name: 'zz-random.txt', content_base64: b64('x') }] });
    expect(hello.run.argv.slice(-1)).to.deep.equal(['Main']);
    expect(hello.problem).to.equal(undefined);
    expect(last('package a.b;\npublic class Outer {\n  int f() { return 1; }\n  static class Inner { static public void main(String[] a) {} }\n}').run.argv.slice(-1)).to.deep.equal(['a.b.Outer$Inner']);
    expect(last('public class Sol { void run() { Runnable r = new Runnable() { public void run() {} }; }\n  public static void main(String... a) {} }').run.argv.slice(-1)).to.deep.equal(['Sol']);
    // Another file's main, with that file's package; the main file's own wins.
    const other = last('package app;\npublic class App { }', { main: 'src/app/App.java', files: [{ name: 'src/tool/Run.java', content_base64: b64('package tool;\nclass Run { public static void main(String[] a) {} }') }] });
    expect(other.run.argv.slice(-1)).to.deep.equal(['tool.Run']);
    // Comments and strings do not count: no entry point is a compile error saying so.
    const none = last('public class Main {\n  // public static void main(String[] a) {}\n  String s = "public static void main(";\n  /* static void main( */\n}');
    expect(none.problem).to.equal('no class declares public static void main(String[] args)');
  });

  it('Kotlin runs the file with a top-level fun main; Scala the object with a main or that extends App', () => {
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const kotlin = entry('kotlin-1.3');
    const kt = planProgram(kotlin, { code: 'package lib\nfun helper() = 1', run_options: { main: 'util.kt', files: [{ name: 'app/run-me.kt', content_base64: b64('package app\nimport lib.helper\nfun main() { println(helper()) }') }] } });
    expect(kt.run.argv.slice(-1)).to.deep.equal(['app.Run_meKt']);
    expect(planProgram(kotlin, { code: 'class A {\n  fun main() {}\n}\n// fun main() {}\n' }).problem).to.equal('no file declares a top-level fun main()');
    const scala = entry('scala-2.11');
    expect(planProgram(scala, { code: 'object Solution {\n  def helper(): Int = { 1 }\n  def main(args: Array[String]): Unit = println(helper())\n}' }).run.argv.slice(-1)).to.deep.equal(['Solution']);
    expect(planProgram(scala, { code: 'package p\ncase class P(x: Int)\nobject Hello extends App {\n  println(P(1))\n}' }).run.argv.slice(-1)).to.deep.equal(['p.Hello']);
    expect(planProgram(scala, { code: 'class C {\n  def main(args: Array[String]): Unit = ()\n}' }).problem).to.equal('no object has a main method (def main(args: Array[String])) or extends App');
  });

  it('Prolog runs main/0 unless the program starts itself (an initialization directive); OCaml links str and unix', () => {
    const prolog = entry('swipl-9.0');
    const goal = (code: string) => { const argv = planProgram(prolog, { code }).run.argv; return argv[argv.indexOf('-g') + 1]; };
    expect(goal('main :- write(hi), nl.\n')).to.equal('(current_predicate(main/0) -> main ; true)');
    expect(goal(':- initialization(main).\nmain :- write(hi), nl.\n')).to.equal('true');
    expect(goal('main :- true.\n:- initialization(main, main).\n')).to.equal('true');
    expect(planProgram(entry('ocaml-4.13'), { code: '' }).compile!.argv.slice(-4)).to.deep.equal(['main', 'unix.cmxa', 'str.cmxa', 'main.ml']);
  });

  it('Kotlin names the main class as its compiler does; F# puts the main file last; the compile script is optional', () => {
    expect(planProgram(entry('kotlin-1.3'), { code: 'package a.b\nfun main() {}', run_options: { main: 'hello-world.kt' } }).run.argv.slice(-1)).to.deep.equal(['a.b.Hello_worldKt']);
    const fs = planProgram(entry('dotnet-fsharp-5'), { code: '', run_options: { main: 'Program.fs', files: [{ name: 'B.fs', content_base64: '' }, { name: 'A.fs', content_base64: '' }] } });
    expect(fs.compile!.argv.slice(-3)).to.deep.equal(['A.fs', 'B.fs', 'Program.fs']);
    expect(planProgram(entry('multi-file'), { code: 'echo hi' }).compile).to.equal(undefined);
    const built = planProgram(entry('multi-file'), { code: './app', run_options: { files: [{ name: 'compile', content_base64: '' }], compiler_options: ['-O2'] } });
    expect(built.compile!.argv).to.deep.equal(['/bin/bash', 'compile', '-O2']);
    expect(built.compile!.collect).to.deep.equal(['./']);
    expect(built.run.argv).to.deep.equal(['/bin/bash', 'run']);
  });

  it("a judged run's syntax check is the compile stage of a language without one (not Judge0's, not a plain run's)", () => {
    const py = entry('python-3.9.7');
    const judge = { checker: { type: 'lines' as const }, interactor: null, stop_on_failure: false };
    expect(syntaxChecked(py, { judge }, 'sync')).to.equal(true);
    expect(syntaxChecked(py, { judge }, undefined)).to.equal(true);
    expect(syntaxChecked(py, {}, 'sync')).to.equal(false);
    expect(syntaxChecked(py, null, 'piston')).to.equal(false);
    expect(syntaxChecked(py, { judge }, 'judge0')).to.equal(false);
    expect(syntaxChecked(entry('gcc-9'), { judge }, 'sync')).to.equal(false);
    const plan = planProgram(py, { code: 'print(1)', run_options: { main: 'a/main.py', files: [{ name: 'a/util.py', content_base64: '' }, { name: 'data.txt', content_base64: '' }] } }, { syntaxCheck: true });
    expect(plan.compile).to.deep.equal({ argv: ['/usr/bin/python3.9', '-m', 'py_compile', 'a/main.py', 'a/util.py'], files: plan.files, dirs: [], collect: [], required: [] });
    expect(plan.run.argv).to.deep.equal(['/usr/bin/python3.9', 'a/main.py']);
    expect(planProgram(py, { code: 'print(1)' }).compile).to.equal(undefined);
  });

  it('return_files collects /box/out; a file named like the main one cannot replace it', () => {
    const plan = planProgram(entry('python-3.9.7'), { code: 'print(1)', run_options: { return_files: true, files: [{ name: 'main.py', content_base64: Buffer.from('evil').toString('base64') }] } });
    expect(plan.run.collect).to.deep.equal(['out/']);
    expect(plan.files.map((f) => [f.name, f.content.toString()])).to.deep.equal([['main.py', 'print(1)']]);
  });

  it('a file name is never an option: in every recipe, each name that would start an argv entry with - (or any other sign) gets ./', () => {
    expect(entries.length).to.be.greaterThan(50);
    for (const e of entries) {
      const ext = extensionOf(e.source);
      const exts = [...new Set([ext, ...(e.sources ?? [])])];
      // The main file, a file of each source extension at the top and in a directory of such a name, and the optional compile script.
      const others = [...exts.flatMap((x) => [`-y${x}`, `-d/-z${x}`, `+p${x}`]), ...(e.compileOnlyWith ? [e.compileOnlyWith] : [])];
      const plan = planProgram(e, { code: e.hello.code, run_options: { main: `-x${ext}`, files: others.map((name) => ({ name, content_base64: '' })) } });
      // What the recipe itself says starts with -: its own literal options, or their prefix before a token (ghc's -i{dir}).
      const template = [...(e.compile ?? []), ...e.run];
      const own = template.filter((a) => a.startsWith('-')).map((a) => (a.includes('{') ? { prefix: a.slice(0, a.indexOf('{')) } : { exact: a }));
      for (const [stage, argv] of [['compile', plan.compile?.argv ?? []], ['run', plan.run.argv]] as const) {
        for (const a of argv.slice(1)) {
          if (!/^[-+]/.test(a)) continue;
          expect(own.some((o) => ('exact' in o ? a === o.exact : a.startsWith(o.prefix))), `${e.id} ${stage}: ${a} in ${JSON.stringify(argv)}`).to.equal(true);
        }
      }
      const all = [...(plan.compile?.argv ?? []), ...plan.run.argv];
      if (template.includes('{file}') || template.includes('{sources}')) expect(all, e.id).to.include(`./-x${ext}`);
      if (template.includes('{sources}') || template.includes('{others}')) expect(all, e.id).to.include.members(e.sources!.flatMap((x) => [`./-y${x}`, `./-d/-z${x}`, `./+p${x}`]));
    }
  });

  it('ordinary names are passed as they are; ./ only where a name could be read as an option', () => {
    expect(['main.c', 'src/a.c', '_x.py', 'Main', '.', '/usr/bin/x'].map(notAnOption)).to.deep.equal(['main.c', 'src/a.c', '_x.py', 'Main', '.', '/usr/bin/x']);
    expect(['-B.c', '+x', '.c/specs', '@args', '-'].map(notAnOption)).to.deep.equal(['./-B.c', './+x', './.c/specs', './@args', './-']);
    // gcc's -B through a program file named -B.c: compiled as a file, never the option.
    const plan = planProgram(entry('gcc-9'), { code: 'int main(){}', run_options: { main: 'main.c', files: [{ name: '-B.c', content_base64: '' }, { name: '.c/specs', content_base64: '' }] } });
    expect(plan.compile!.argv).to.deep.equal(['/usr/bin/gcc-9', '-O2', '-pipe', '-pthread', '-I.', '-o', 'main', './-B.c', 'main.c', '-lm']);
    // Java's main class from a file named -x.java cannot be an option either; an ordinary one is unchanged.
    expect(planProgram(entry('openjdk-17'), { code: 'class A {}', run_options: { main: '-x.java' } }).run.argv.slice(-1)).to.deep.equal(['./-x']);
    expect(planProgram(entry('openjdk-17'), { code: 'public class Main {}' }).run.argv.slice(-1)).to.deep.equal(['Main']);
  });
});
