import { expect } from 'chai';
import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';

// PHP 8 and Ruby 3: interpreted, no compile stage.

describeCompiler('php-8.1', [
  { name: 'hello world', code: '<?php\necho "Hello, World!\\n";\n', check: (r) => (succeeds('Hello, World!\n')(r), expect(r.compile_output).to.equal(null)) },
  { name: 'echoes standard input', code: '<?php\necho stream_get_contents(STDIN);\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: '<?php\nfwrite(STDERR, "exiting 5\\n");\nexit(5);\n', check: runtimeError(5, 'exiting 5') },
  { name: 'a fatal error is runtime_error 255 with the message on stderr', code: '<?php\nundefined_function();\n', check: runtimeError(255, 'Call to undefined function undefined_function()') },
  {
    name: 'PHP 8: match, named arguments and the nullsafe operator',
    code: '<?php\n$n = 3;\necho match (true) { $n < 2 => "small", $n < 5 => "medium", default => "large" }, "\\n";\necho str_pad(string: "x", length: 3, pad_string: "-"), "\\n";\n$o = null;\nvar_dump($o?->missing);\n',
    check: succeeds('medium\nx--\nNULL\n'),
  },
]);

describeCompiler('ruby-3.0.2', [
  { name: 'hello world', code: "puts 'Hello, World!'\n", check: (r) => (succeeds('Hello, World!\n')(r), expect(r.compile_output).to.equal(null)) },
  { name: 'echoes standard input', code: 'print STDIN.read\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a non-zero exit is runtime_error with that exit code', code: 'warn "exiting 6"\nexit 6\n', check: runtimeError(6, 'exiting 6') },
  { name: 'an uncaught exception is runtime_error 1', code: 'raise ArgumentError, "broken"\n', check: runtimeError(1, 'broken (ArgumentError)') },
  {
    name: 'Ruby 3: endless methods and rightward assignment',
    code: 'def sq(x) = x * x\nputs sq(7)\n42 => answer\nputs answer\ncase {name: "ruby", major: 3}\nin {name: String => n, major: Integer => m} then puts "#{n} #{m}"\nend\n',
    check: succeeds('49\n42\nruby 3\n'),
  },
]);
