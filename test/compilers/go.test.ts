import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Go 1.19: `go build` in the compile stage (cache in /tmp, no cgo), the binary in the run stage.

describeCompiler('go-1.19', [
  ...recipePrograms('go-1.19'),
  {
    name: 'echoes standard input',
    code: 'package main\n\nimport (\n\t"io"\n\t"os"\n)\n\nfunc main() {\n\tio.Copy(os.Stdout, os.Stdin)\n}\n',
    input: ECHO_INPUT,
    check: succeeds(ECHO_INPUT),
  },
  {
    name: 'a compile error is compile_error with the message',
    code: 'package main\n\nfunc main() {\n\tx := 1\n}\n',
    check: compileError('./main.go:4:2: x declared but not used'),
  },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Fprintln(os.Stderr, "exiting 5")\n\tos.Exit(5)\n}\n',
    check: runtimeError(5, 'exiting 5'),
  },
  { name: 'a panic is runtime_error 2 with the message', code: 'package main\n\nfunc main() {\n\tpanic("broken")\n}\n', check: runtimeError(2, 'panic: broken') },
  {
    // GOMAXPROCS=2: the scheduler sizes itself to the CPU limit, not the host's cores.
    name: '10000 goroutines run on GOMAXPROCS=2',
    code: [
      'package main',
      '',
      'import (',
      '\t"fmt"',
      '\t"runtime"',
      '\t"sync"',
      ')',
      '',
      'func main() {',
      '\tvar wg sync.WaitGroup',
      '\tresults := make(chan int, 10000)',
      '\tfor i := 0; i < 10000; i++ {',
      '\t\twg.Add(1)',
      '\t\tgo func(n int) {',
      '\t\t\tdefer wg.Done()',
      '\t\t\tresults <- n % 7',
      '\t\t}(i)',
      '\t}',
      '\twg.Wait()',
      '\tclose(results)',
      '\tsum := 0',
      '\tfor r := range results {',
      '\t\tsum += r',
      '\t}',
      '\tfmt.Println(sum, runtime.GOMAXPROCS(0))',
      '}',
      '',
    ].join('\n'),
    check: succeeds('29994 2\n'),
  },
  {
    name: 'the build cache stays in the compile stage: the run stage finds /tmp empty',
    code: 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tentries, err := os.ReadDir("/tmp")\n\tfmt.Println(len(entries), err)\n}\n',
    check: (r) => (succeeds('0 <nil>\n')(r), expect(r.compile_output).to.equal('')),
  },
]);
