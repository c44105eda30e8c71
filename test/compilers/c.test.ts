import { expect } from 'chai';
import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';

// C and C++ through GCC at GCC 4.9's default standards: gnu89 and gnu++98.

const C_ECHO = '#include <stdio.h>\nint main(void) {\n  int c;\n  while ((c = getchar()) != EOF) putchar(c);\n  return 0;\n}\n';

describeCompiler('gcc-4.9', [
  {
    name: 'hello world (compiled in a stage of its own)',
    code: '#include <stdio.h>\nint main(void) { printf("Hello, World!\\n"); return 0; }\n',
    check: (r) => (succeeds('Hello, World!\n')(r), expect(r.compile_output).to.equal('')),
  },
  { name: 'echoes standard input', code: C_ECHO, input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'int main(void) { return undefined_name; }\n', check: compileError('main.c:1:', 'error: ‘undefined_name’ undeclared') },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: '#include <stdio.h>\nint main(void) { fprintf(stderr, "exiting 5\\n"); return 5; }\n',
    check: runtimeError(5, 'exiting 5'),
  },
  {
    name: 'gnu89: a declaration in a for-loop header is an error',
    code: '#include <stdio.h>\nint main(void) {\n  for (int i = 0; i < 3; i++) printf("%d", i);\n  return 0;\n}\n',
    check: compileError('main.c:3:', 'error: ‘for’ loop initial declarations are only allowed in C99'),
  },
  {
    // The compile stage's sandbox is gone; only the source and the named artifact are handed on, beside the empty out/.
    name: 'the run stage gets a fresh workspace with the source, the binary and an empty out/ only',
    code: [
      '#include <dirent.h>',
      '#include <stdio.h>',
      '#include <stdlib.h>',
      '#include <string.h>',
      'static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }',
      'int main(void) {',
      '  DIR *d = opendir(".");',
      '  struct dirent *e;',
      '  char *names[64];',
      '  int n = 0, i;',
      '  while ((e = readdir(d)) != NULL && n < 64) if (e->d_name[0] != \'.\') names[n++] = strdup(e->d_name);',
      '  qsort(names, n, sizeof *names, cmp);',
      '  for (i = 0; i < n; i++) printf("%s\\n", names[i]);',
      '  return 0;',
      '}',
      '',
    ].join('\n'),
    check: succeeds('main\nmain.c\nout\n'),
  },
  {
    name: 'gnu89: GNU extensions and C89 declarations compile',
    code: '#include <stdio.h>\n#include <math.h>\nint main(void) {\n  int i;\n  long long big = 1LL << 40;\n  for (i = 0; i < 2; i++) printf("%lld ", big + i);\n  printf("%.0f\\n", sqrt(49.0));\n  return 0;\n}\n',
    check: succeeds('1099511627776 1099511627777 7\n'),
  },
]);

describeCompiler('g++-4.9', [
  {
    name: 'hello world (compiled in a stage of its own)',
    code: '#include <iostream>\nint main() { std::cout << "Hello, World!" << std::endl; return 0; }\n',
    check: (r) => (succeeds('Hello, World!\n')(r), expect(r.compile_output).to.equal('')),
  },
  {
    name: 'echoes standard input',
    code: '#include <iostream>\n#include <string>\nint main() {\n  std::string line;\n  bool first = true;\n  while (std::getline(std::cin, line)) {\n    if (!first) std::cout << "\\n";\n    std::cout << line;\n    first = false;\n  }\n  return 0;\n}\n',
    input: ECHO_INPUT,
    check: succeeds(ECHO_INPUT),
  },
  { name: 'a compile error is compile_error with the message', code: 'int main() { std::string s; return 0; }\n', check: compileError('main.cpp:1:', 'error: ‘string’ is not a member of ‘std’') },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: '#include <cstdlib>\n#include <iostream>\nint main() { std::cerr << "exiting 6" << std::endl; std::exit(6); }\n',
    check: runtimeError(6, 'exiting 6'),
  },
  {
    name: 'gnu++98: nullptr (C++11) is an error',
    code: '#include <cstdio>\nint main() { int *p = nullptr; std::printf("%p\\n", (void *)p); return 0; }\n',
    check: compileError('error: ‘nullptr’ was not declared in this scope'),
  },
  {
    name: 'gnu++98: auto is not type deduction',
    code: 'int main() { auto x = 1; return x; }\n',
    check: compileError('error: ‘x’ does not name a type'),
  },
  {
    name: 'gnu++98: templates and the STL compile',
    code: '#include <iostream>\n#include <map>\n#include <vector>\ntemplate <typename T> T twice(T v) { return v + v; }\nint main() {\n  std::map<int, std::vector<int> > m;\n  m[1].push_back(twice(21));\n  std::cout << m[1][0] << std::endl;\n  return 0;\n}\n',
    check: succeeds('42\n'),
  },
]);
