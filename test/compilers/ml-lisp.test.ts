import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// OCaml (ocamlopt, native code) and Common Lisp (SBCL, --script) on the ml-lisp image.

describeCompiler('ocaml-4.13', [
  ...recipePrograms('ocaml-4.13'),
  { name: 'echoes standard input', code: 'let () =\n  let buf = Bytes.create 4096 in\n  let rec loop () =\n    let n = input stdin buf 0 4096 in\n    if n > 0 then (output stdout buf 0 n; loop ())\n  in\n  loop ()\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a type error is compile_error with the message', code: 'let () = print_int "text"\n', check: compileError('File "main.ml", line 1', 'Error: This expression has type string but an expression was expected of type') },
  { name: 'exit n is runtime_error with that exit code', code: 'let () = prerr_endline "exiting 3"; exit 3\n', check: runtimeError(3, 'exiting 3') },
  { name: 'links str and unix, as Kattis and DOMjudge do', code: 'let () =\n  print_endline (Str.global_replace (Str.regexp "a") "o" "banana");\n  Printf.printf "%b\\n" (Unix.getpid () > 0)\n', check: succeeds('bonono\ntrue\n') },
]);

describeCompiler('sbcl-2.2', [
  ...recipePrograms('sbcl-2.2'),
  {
    name: 'echoes standard input',
    code: '(loop for line = (read-line *standard-input* nil) while line do (write-line line))\n',
    input: 'one\ntwo\n',
    check: succeeds('one\ntwo\n'),
  },
  { name: 'an unhandled error is runtime_error with the message', code: '(error "broken")\n', check: runtimeError(1, 'broken') },
  {
    name: '40 threads alive at once run normally',
    code: '(let ((threads (loop for i from 1 to 40 collect (let ((n i)) (sb-thread:make-thread (lambda () (sleep 0.2) n))))))\n  (format t "threads done: ~a~%" (reduce #\'+ (mapcar #\'sb-thread:join-thread threads))))\n',
    check: succeeds('threads done: 820\n'),
  },
]);
