import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// NASM (assembled, then linked with ld in the same compile stage), Objective-C with
// GNUstep Base (the Objective-C GCC compiles: no ARC, @autoreleasepool or literals),
// Nim and Crystal on the native-extra image.

const NASM_EXIT = 'section .text\n    global _start\n_start:\n    mov rax, 60\n    mov rdi, 9\n    syscall\n';
const NASM_ECHO = [
  'section .bss',
  '    buf resb 4096',
  'section .text',
  '    global _start',
  '_start:',
  '.loop:',
  '    xor eax, eax',
  '    xor edi, edi',
  '    mov rsi, buf',
  '    mov edx, 4096',
  '    syscall',
  '    test rax, rax',
  '    jle .done',
  '    mov rdx, rax',
  '    mov eax, 1',
  '    mov edi, 1',
  '    mov rsi, buf',
  '    syscall',
  '    jmp .loop',
  '.done:',
  '    mov eax, 60',
  '    xor edi, edi',
  '    syscall',
  '',
].join('\n');

describeCompiler('nasm-2.16', [
  ...recipePrograms('nasm-2.16'),
  { name: 'echoes standard input with read and write system calls', code: NASM_ECHO, input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an assembly error is compile_error with the message, and nothing is linked', code: 'section .text\n    global _start\n_start:\n    mov rax, nosuchlabel\n', check: compileError(/main\.asm:4: error: symbol `nosuchlabel' not defined/, 'compilation produced no main') },
  {
    name: 'a link error is compile_error with the message',
    code: 'section .text\n    global _start\n    extern missing\n_start:\n    call missing\n',
    check: compileError("undefined reference to `missing'", 'compilation produced no main'),
  },
  { name: 'the exit system call is runtime_error with that exit code', code: NASM_EXIT, check: runtimeError(9) },
]);

describeCompiler('gobjc-12', [
  ...recipePrograms('gobjc-12'),
  { name: 'echoes standard input', code: '#import <Foundation/Foundation.h>\n\nint main(void) {\n  int c;\n  while ((c = getchar()) != EOF) putchar(c);\n  return 0;\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'NSString and NSDictionary from GNUstep Base', code: '#import <Foundation/Foundation.h>\n\nint main(void) {\n  NSAutoreleasePool *pool = [[NSAutoreleasePool alloc] init];\n  NSDictionary *d = [NSDictionary dictionaryWithObject:@"v" forKey:@"k"];\n  NSString *s = [[d objectForKey:@"k"] uppercaseString];\n  printf("%s %lu\\n", [s UTF8String], (unsigned long)[d count]);\n  [pool drain];\n  return 0;\n}\n', check: succeeds('V 1\n') },
  { name: 'a compile error is compile_error with the message', code: '#import <Foundation/Foundation.h>\n\nint main(void) {\n  return undefined_name;\n}\n', check: compileError("main.m:4:10: error: ‘undefined_name’ undeclared") },
  { name: 'a non-zero exit is runtime_error with that exit code', code: '#import <Foundation/Foundation.h>\n\nint main(void) {\n  fprintf(stderr, "exiting 5\\n");\n  return 5;\n}\n', check: runtimeError(5, 'exiting 5') },
]);

describeCompiler('nim-1.6', [
  ...recipePrograms('nim-1.6'),
  { name: 'echoes standard input', code: 'stdout.write(stdin.readAll())\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'let x: int = "text"\n', check: compileError(/main\.nim\(1, 14\) Error: type mismatch/) },
  { name: 'an uncaught exception is runtime_error 1 with the message', code: 'raise newException(ValueError, "broken")\n', check: runtimeError(1, 'broken [ValueError]') },
  { name: 'quit N is runtime_error with that exit code', code: 'stderr.writeLine("exiting 3")\nquit(3)\n', check: runtimeError(3, 'exiting 3') },
]);

describeCompiler('crystal-1.6', [
  ...recipePrograms('crystal-1.6'),
  { name: 'echoes standard input', code: 'print STDIN.gets_to_end\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'x : Int32 = "text"\n', check: compileError(/type must be Int32, not String/) },
  { name: 'an uncaught exception is runtime_error 1 with the message', code: 'raise "broken"\n', check: runtimeError(1, 'broken') },
  { name: 'exit N is runtime_error with that exit code', code: 'STDERR.puts "exiting 4"\nexit 4\n', check: runtimeError(4, 'exiting 4') },
]);
