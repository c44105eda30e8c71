import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Visual Basic .NET on the dotnet-vb image: vbc.dll with the SDK's project defaults
// (Option Infer On, Explicit On, Strict Off; the usual project imports), run with the
// runtime settings of the C# and F# identifiers.

describeCompiler('dotnet-vb-10', [
  ...recipePrograms('dotnet-vb-10'),
  { name: 'echoes standard input (UTF-8)', code: 'Module Program\n    Sub Main()\n        Console.Write(Console.In.ReadToEnd())\n    End Sub\nEnd Module\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'Microsoft.VisualBasic functions and LINQ are there without imports', code: 'Module Program\n    Sub Main()\n        Dim xs = From x In {3, 1, 2} Order By x Select x * 10\n        Console.WriteLine(String.Join(",", xs) & " " & UCase(Left("basic", 3)))\n    End Sub\nEnd Module\n', check: succeeds('10,20,30 BAS\n') },
  { name: 'a compile error is compile_error with the message', code: 'Module Program\n    Sub Main()\n        Dim x As Integer = NoSuchThing()\n    End Sub\nEnd Module\n', check: compileError(/main\.vb\(3\) : error BC30451/) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'Module Program\n    Function Main() As Integer\n        Console.Error.WriteLine("exiting 9")\n        Return 9\n    End Function\nEnd Module\n', check: runtimeError(9, 'exiting 9') },
  {
    name: '40 threads alive at once run normally, on 2 processors',
    code: 'Imports System.Threading\n\nModule Program\n    Sub Main()\n        Dim done = 0\n        Dim barrier As New Barrier(40)\n        Dim threads = Enumerable.Range(0, 40).Select(Function(i) New Thread(Sub()\n                barrier.SignalAndWait()\n                Interlocked.Increment(done)\n            End Sub)).ToList()\n        threads.ForEach(Sub(t) t.Start())\n        threads.ForEach(Sub(t) t.Join())\n        Console.WriteLine($"threads done: {done}, {Environment.ProcessorCount} processors")\n    End Sub\nEnd Module\n',
    check: succeeds('threads done: 40, 2 processors\n'),
  },
  {
    name: 'running out of heap is an OutOfMemoryException, not a kill',
    code: 'Module Program\n    Sub Main()\n        Dim keep As New List(Of Byte())\n        Try\n            Do\n                Dim b(1048575) As Byte\n                Array.Fill(b, CByte(1))\n                keep.Add(b)\n            Loop\n        Catch e As OutOfMemoryException\n            Console.WriteLine(If(keep.Count > 300, "out of memory past 300 MiB", $"out of memory at {keep.Count} MiB"))\n        End Try\n    End Sub\nEnd Module\n',
    check: succeeds('out of memory past 300 MiB\n'),
  },
]);
