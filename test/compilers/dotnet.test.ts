import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';

// C# at language version 9 and F#, compiled with csc/fsc and run with `dotnet exec`.

const THREADS_CS = [
  'using System;',
  'using System.Threading;',
  '',
  'class Program {',
  '  static void Main() {',
  '    const int n = 40;',
  '    using var barrier = new Barrier(n);',
  '    int done = 0;',
  '    var threads = new Thread[n];',
  '    for (int i = 0; i < n; i++) {',
  '      threads[i] = new Thread(() => {',
  '        if (!barrier.SignalAndWait(TimeSpan.FromSeconds(20))) throw new Exception("barrier timed out");',
  '        Interlocked.Increment(ref done);',
  '      });',
  '      threads[i].Start();',
  '    }',
  '    foreach (var t in threads) t.Join();',
  '    Console.WriteLine($"threads done: {done}");',
  '  }',
  '}',
  '',
].join('\n');

describeCompiler('dotnet-csharp-5', [
  {
    name: 'hello world: classic Main',
    code: 'using System;\n\nnamespace App {\n  class Program {\n    static void Main(string[] args) { Console.WriteLine("Hello, World!"); }\n  }\n}\n',
    check: succeeds('Hello, World!\n'),
  },
  {
    name: 'C# 9: top-level statements',
    code: 'using System;\n\nvar who = "top level";\nConsole.WriteLine($"Hello from {who}");\nreturn 0;\n',
    check: succeeds('Hello from top level\n'),
  },
  { name: 'echoes standard input (UTF-8)', code: 'using System;\n\nConsole.Write(Console.In.ReadToEnd());\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  {
    name: 'a compile error is compile_error with the message',
    code: 'class Program {\n  static void Main() { int x = "text"; }\n}\n',
    check: compileError('main.cs(2,32): error CS0029'),
  },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: 'using System;\n\nclass Program {\n  static int Main() { Console.Error.WriteLine("exiting 9"); return 9; }\n}\n',
    check: runtimeError(9, 'exiting 9'),
  },
  {
    // The runtime aborts on an unhandled exception: SIGABRT, reported as 128 + 6.
    name: 'an unhandled exception is runtime_error (SIGABRT) with the exception',
    code: 'throw new System.InvalidOperationException("broken");\n',
    check: (r) => {
      expect(r).to.include({ status: 'runtime_error', exit_code: 134, signal: 6 });
      expect(r.error).to.contain('Unhandled exception. System.InvalidOperationException: broken');
    },
  },
  {
    name: 'C# 9: records, init-only setters and with-expressions',
    code: 'using System;\n\nvar p = new Point(1, 2);\nvar q = p with { Y = 5 };\nConsole.WriteLine(p);\nConsole.WriteLine(q);\nConsole.WriteLine(p == new Point(1, 2));\n\nrecord Point(int X, int Y);\n',
    check: succeeds('Point { X = 1, Y = 2 }\nPoint { X = 1, Y = 5 }\nTrue\n'),
  },
  {
    name: 'language version 9: a C# 10 file-scoped namespace is refused',
    code: 'namespace App;\n\nclass Program {\n  static void Main() { }\n}\n',
    check: compileError('error CS8773', '9.0'),
  },
  { name: '40 threads alive at once run normally', code: THREADS_CS, check: succeeds('threads done: 40\n') },
  {
    // DOTNET_GCHeapHardLimit: the runtime cannot see the job's memory limit from inside the sandbox.
    name: 'running out of heap is an OutOfMemoryException, not a kill',
    code: 'using System;\nusing System.Collections.Generic;\n\nvar keep = new List<byte[]>();\ntry {\n  while (true) { var b = new byte[1 << 20]; Array.Fill(b, (byte)1); keep.Add(b); }\n} catch (OutOfMemoryException) {\n  Console.WriteLine(keep.Count > 300 ? "out of memory past 300 MiB" : $"out of memory at {keep.Count} MiB");\n}\n',
    check: succeeds('out of memory past 300 MiB\n'),
  },
  {
    // DOTNET_EnableDiagnostics=0: no diagnostic IPC socket in /tmp; DOTNET_PROCESSOR_COUNT=2.
    name: 'the runtime leaves /tmp empty and sees 2 processors',
    code: 'using System;\nusing System.IO;\n\nConsole.WriteLine($"{Directory.GetFileSystemEntries("/tmp").Length} {Environment.ProcessorCount}");\n',
    check: succeeds('0 2\n'),
  },
]);

describeCompiler('dotnet-fsharp-5', [
  { name: 'hello world: a plain program', code: 'printfn "Hello, World!"\n', check: succeeds('Hello, World!\n') },
  {
    name: 'an explicit entry point',
    code: '[<EntryPoint>]\nlet main argv =\n  printfn "entry with %d arguments" argv.Length\n  0\n',
    check: succeeds('entry with 0 arguments\n'),
  },
  { name: 'echoes standard input (UTF-8)', code: 'let text = stdin.ReadToEnd()\nprintf "%s" text\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  {
    name: 'a compile error is compile_error with the message',
    code: 'let x : int = "text"\nprintfn "%d" x\n',
    check: compileError('error FS0001'),
  },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'eprintfn "exiting 3"\nexit 3\n', check: runtimeError(3, 'exiting 3') },
  {
    name: 'F# 5: string interpolation, typed and untyped',
    code: 'let name = "F#"\nlet version = 5\nprintfn $"Hello from {name} {version}"\nprintfn $"typed: %d{version + 1} %s{name.ToLower()}"\n',
    check: succeeds('Hello from F# 5\ntyped: 6 f#\n'),
  },
  {
    name: '40 threads alive at once run normally',
    code: [
      'open System',
      'open System.Threading',
      '',
      'let n = 40',
      'let barrier = new Barrier(n)',
      'let mutable done_ = 0',
      'let threads =',
      '  [| for _ in 1 .. n ->',
      '       Thread(fun () ->',
      '         if not (barrier.SignalAndWait(TimeSpan.FromSeconds 20.0)) then failwith "barrier timed out"',
      '         Interlocked.Increment(&done_) |> ignore) |]',
      'for t in threads do t.Start()',
      'for t in threads do t.Join()',
      'printfn "threads done: %d" done_',
      '',
    ].join('\n'),
    check: succeeds('threads done: 40\n'),
  },
]);
