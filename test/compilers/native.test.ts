import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Fortran (gfortran), Pascal (Free Pascal), D (gdc) and COBOL (GnuCOBOL) on the
// native image: each compiles to a binary in the compile stage.

describeCompiler('fortran-12', [
  ...recipePrograms('fortran-12'),
  {
    name: 'echoes standard input line by line',
    code: 'program echo\n  implicit none\n  character(len=1000) :: line\n  integer :: ios\n  do\n    read(*, \'(a)\', iostat=ios) line\n    if (ios /= 0) exit\n    write(*, \'(a)\') trim(line)\n  end do\nend program echo\n',
    input: 'one\ntwo\n',
    check: succeeds('one\ntwo\n'),
  },
  { name: 'a compile error is compile_error with the message', code: 'program bad\n  implicit none\n  x = 1\nend program bad\n', check: compileError('main.f90:3:', 'Error: Symbol ‘x’ at (1) has no IMPLICIT type') },
  { name: 'stop n is runtime_error with that exit code', code: 'program s\n  stop 3\nend program s\n', check: runtimeError(3) },
]);

describeCompiler('pascal-3.2', [
  ...recipePrograms('pascal-3.2'),
  {
    name: 'echoes standard input line by line',
    code: 'program Echo;\nvar line: string;\nbegin\n  while not eof do\n  begin\n    readln(line);\n    writeln(line);\n  end;\nend.\n',
    input: 'one\ntwo\n',
    check: succeeds('one\ntwo\n'),
  },
  { name: 'a compile error is compile_error with the message', code: 'program Bad;\nbegin\n  x := 1;\nend.\n', check: compileError('main.pas(3,3) Error: Identifier not found "x"') },
  { name: 'halt(n) is runtime_error with that exit code', code: 'program H;\nbegin\n  halt(4);\nend.\n', check: runtimeError(4) },
]);

describeCompiler('gdc-12', [
  ...recipePrograms('gdc-12'),
  { name: 'echoes standard input', code: 'import std.stdio;\n\nvoid main() {\n    foreach (chunk; stdin.byChunk(4096)) stdout.rawWrite(chunk);\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'void main() {\n    int x = "text";\n}\n', check: compileError('main.d:2:13: error: cannot implicitly convert expression') },
  { name: 'a non-zero return is runtime_error with that exit code', code: 'int main() {\n    return 5;\n}\n', check: runtimeError(5) },
]);

describeCompiler('cobol-3.1', [
  ...recipePrograms('cobol-3.1'),
  {
    name: 'reads a line of standard input',
    code: 'IDENTIFICATION DIVISION.\nPROGRAM-ID. ECHO.\nDATA DIVISION.\nWORKING-STORAGE SECTION.\n01 LINE-IN PIC X(40).\nPROCEDURE DIVISION.\n    ACCEPT LINE-IN.\n    DISPLAY FUNCTION TRIM(LINE-IN).\n    STOP RUN.\n',
    input: 'hello cobol\n',
    check: succeeds('hello cobol\n'),
  },
  { name: 'a compile error is compile_error with the message', code: 'IDENTIFICATION DIVISION.\nPROGRAM-ID. BAD.\nPROCEDURE DIVISION.\n    MOVE 1 TO MISSING.\n    STOP RUN.\n', check: compileError("main.cob:4: error: 'MISSING' is not defined") },
]);
