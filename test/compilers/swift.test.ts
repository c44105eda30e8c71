import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';
import { recipePrograms } from './recipe-programs.js';

// Swift 6.0 from trixie on the swift image: swiftc -O, its module cache in /tmp.

describeCompiler('swift-6.0', [
  ...recipePrograms('swift-6.0'),
  { name: 'echoes standard input', code: 'while let line = readLine(strippingNewline: false) {\n    print(line, terminator: "")\n}\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  { name: 'a compile error is compile_error with the message', code: 'let x: Int = "text"\n', check: compileError(/main\.swift:1:14: error: cannot convert value of type 'String' to specified type 'Int'/) },
  { name: 'exit(N) is runtime_error with that exit code', code: 'import Foundation\n\nFileHandle.standardError.write("exiting 3\\n".data(using: .utf8)!)\nexit(3)\n', check: runtimeError(3, 'exiting 3') },
  {
    name: 'threads run (Dispatch)',
    code: 'import Dispatch\n\nlet group = DispatchGroup()\nlet lock = DispatchSemaphore(value: 1)\nvar total = 0\nfor i in 1...20 {\n    DispatchQueue.global().async(group: group) {\n        lock.wait(); total += i; lock.signal()\n    }\n}\ngroup.wait()\nprint(total)\n',
    check: succeeds('210\n'),
  },
]);
