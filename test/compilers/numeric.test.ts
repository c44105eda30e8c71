import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// R (Rscript) and GNU Octave (octave-cli) on the numeric image.

describeCompiler('r-4.2', [
  ...recipePrograms('r-4.2'),
  { name: 'echoes standard input', code: 'cat(readLines(file("stdin")), sep = "\\n")\n', input: 'a\nb ✓\n', check: succeeds('a\nb ✓\n') },
  { name: 'reads numbers from standard input', code: 'x <- scan(file("stdin"), quiet = TRUE)\ncat(sum(x), "\\n")\n', input: '1 2 3\n4\n', check: succeeds('10 \n') },
  { name: 'stop() is runtime_error 1 with the message', code: 'stop("broken")\n', check: runtimeError(1, 'Error: broken') },
  { name: 'quit(status = N) is runtime_error with that exit code', code: 'message("exiting 3")\nquit(status = 3)\n', check: runtimeError(3, 'exiting 3') },
]);

describeCompiler('octave-7.3', [
  ...recipePrograms('octave-7.3'),
  { name: 'echoes standard input', code: 'printf("%s", fread(stdin, Inf, "char=>char")\');\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'matrices: solving a linear system', code: 'A = [2 1; 1 3];\nb = [3; 5];\nprintf("%.1f %.1f\\n", A \\ b);\n', check: succeeds('0.8 1.4\n') },
  { name: 'error() is runtime_error 1 with the message', code: 'error("broken %d", 7);\n', check: runtimeError(1, 'error: broken 7') },
  { name: 'exit(N) is runtime_error with that exit code', code: 'exit(4);\n', check: runtimeError(4) },
]);
