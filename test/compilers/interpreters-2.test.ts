import { ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Erlang (escript), SWI-Prolog, Racket, Raku and Emacs Lisp on the interpreters image.

describeCompiler('erlang-25', [
  ...recipePrograms('erlang-25'),
  {
    // escript skips its file's first line: the runner writes an empty one before the program.
    name: "the program's first line is kept, and line numbers in messages are the program's",
    code: 'main(_) ->\n    io:format("~p~n", [?LINE]),\n    undefined_fun().\n',
    check: runtimeError(127, /main\.erl:3:5: function undefined_fun\/0 undefined/),
  },
  { name: 'a program with its own #! line runs as written (Piston programs)', code: '#!/usr/bin/env escript\nmain(_) ->\n    io:format("~p~n", [?LINE]).\n', check: succeeds('3\n') },
  { name: 'echoes standard input', code: 'main(_) ->\n    io:setopts(standard_io, [binary]),\n    echo().\n\necho() ->\n    case io:get_chars(standard_io, "", 4096) of\n        eof -> ok;\n        Data -> io:put_chars(Data), echo()\n    end.\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'halt(N) is runtime_error with that exit code', code: 'main(_) ->\n    io:format(standard_error, "exiting 3~n", []),\n    halt(3).\n', check: runtimeError(3, 'exiting 3') },
  {
    name: 'processes run on 2 schedulers, 2 dirty CPU and 2 dirty I/O schedulers (ERL_FLAGS)',
    code: 'main(_) ->\n    Self = self(),\n    [spawn(fun() -> Self ! {done, N rem 7} end) || N <- lists:seq(1, 1000)],\n    Sum = lists:sum([receive {done, R} -> R end || _ <- lists:seq(1, 1000)]),\n    io:format("~p ~p~n", [Sum, [erlang:system_info(K) || K <- [schedulers_online, dirty_cpu_schedulers, dirty_io_schedulers]]]).\n',
    check: succeeds('3003 [2,2,2]\n'),
  },
]);

describeCompiler('swipl-9.0', [
  ...recipePrograms('swipl-9.0'),
  { name: 'echoes standard input', code: ':- initialization(main, main).\n\nmain :- read_string(user_input, _, S), write(S).\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'reads terms from standard input', code: ':- initialization(main, main).\n\nmain :- read(X), read(Y), Z is X + Y, write(Z), nl.\n', input: '40.\n2.\n', check: succeeds('42\n') },
  { name: 'an uncaught error in main is runtime_error 2 with the message', code: ':- initialization(main, main).\n\nmain :- X is foo + 1, write(X).\n', check: runtimeError(2, "Arithmetic: `foo/0' is not a function") },
  {
    // --on-error=status: an error while loading makes the final halt exit 1.
    name: 'a syntax error is runtime_error 1 with the message, the rest of the program runs',
    code: ':- initialization(main).\n\nmain :- write(hi), nl.\nfoo( :- .\n',
    check: runtimeError(1, 'main.pl:4:8: Syntax error: Unexpected end of clause', 'hi\n'),
  },
  { name: 'halt(N) is runtime_error with that exit code', code: ':- initialization(main).\n\nmain :- format(user_error, "exiting 4~n", []), halt(4).\n', check: runtimeError(4, 'exiting 4') },
  { name: 'runs main/0 as Kattis and DOMjudge do when the program does not start itself', code: 'main :- write(kattis), nl.\n', check: succeeds('kattis\n') },
  { name: 'a program of directives alone runs as it did', code: ':- write(hi), nl.\n', check: succeeds('hi\n') },
]);

describeCompiler('racket-8.7', [
  ...recipePrograms('racket-8.7'),
  { name: 'echoes standard input', code: '#lang racket\n(display (port->string (current-input-port)))\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'an error is runtime_error 1 with the message', code: '#lang racket\n(error "broken")\n', check: runtimeError(1, 'broken') },
  { name: 'exit N is runtime_error with that exit code', code: '#lang racket\n(eprintf "exiting 5\\n")\n(exit 5)\n', check: runtimeError(5, 'exiting 5') },
]);

describeCompiler('raku-2022.12', [
  ...recipePrograms('raku-2022.12'),
  { name: 'echoes standard input', code: 'print $*IN.slurp;\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'die is runtime_error 1 with the message', code: 'die "broken";\n', check: runtimeError(1, 'broken') },
  { name: 'exit N is runtime_error with that exit code', code: 'note "exiting 6";\nexit 6;\n', check: runtimeError(6, 'exiting 6') },
  { name: 'start blocks run on the thread pool', code: 'my @p = (1..20).map: -> $n { start { $n * 2 } };\nsay [+] await @p;\n', check: succeeds('420\n') },
]);

describeCompiler('emacs-28.2', [
  ...recipePrograms('emacs-28.2'),
  {
    name: 'reads standard input line by line',
    code: '(let (line)\n  (while (setq line (ignore-errors (read-from-minibuffer "")))\n    (princ (concat (upcase line) "\\n"))))\n',
    input: 'ab\ncd\n',
    check: succeeds('AB\nCD\n'),
  },
  { name: 'an error is runtime_error 255 with the message', code: '(error "broken %d" 7)\n', check: runtimeError(255, 'broken 7') },
  { name: 'kill-emacs N is runtime_error with that exit code', code: '(kill-emacs 7)\n', check: runtimeError(7) },
]);
