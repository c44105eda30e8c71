import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Rust 1.63: rustc -O (edition 2021) in the compile stage, the binary in the run stage.

describeCompiler('rust-1.63', [
  ...recipePrograms('rust-1.63'),
  {
    name: 'echoes standard input',
    code: 'use std::io::{self, Read, Write};\n\nfn main() {\n    let mut s = String::new();\n    io::stdin().read_to_string(&mut s).unwrap();\n    io::stdout().write_all(s.as_bytes()).unwrap();\n}\n',
    input: ECHO_INPUT,
    check: succeeds(ECHO_INPUT),
  },
  {
    name: 'a compile error is compile_error with the message',
    code: 'fn main() {\n    let x: i32 = "text";\n}\n',
    check: compileError('error[E0308]: mismatched types', 'main.rs:2:18'),
  },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: 'fn main() {\n    eprintln!("exiting 6");\n    std::process::exit(6);\n}\n',
    check: runtimeError(6, 'exiting 6'),
  },
  { name: 'a panic is runtime_error 101 with the message', code: 'fn main() {\n    panic!("broken");\n}\n', check: runtimeError(101, "panicked at 'broken'") },
  {
    name: '40 threads alive at once run normally',
    code: [
      'use std::sync::{Arc, Barrier};',
      'use std::thread;',
      '',
      'fn main() {',
      '    let n = 40;',
      '    let barrier = Arc::new(Barrier::new(n));',
      '    let handles: Vec<_> = (0..n)',
      '        .map(|i| {',
      '            let b = Arc::clone(&barrier);',
      '            thread::spawn(move || {',
      '                b.wait();',
      '                i',
      '            })',
      '        })',
      '        .collect();',
      '    let sum: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();',
      '    println!("threads done: {sum}");',
      '}',
      '',
    ].join('\n'),
    check: succeeds('threads done: 780\n'),
  },
]);
