import { compileError, ECHO_INPUT, describeCompiler, runtimeError, succeeds } from './harness.js';

// Haskell through GHC: `main` in module Main, GHC2021 as the default language.

describeCompiler('haskell-9.2.7', [
  { name: 'hello world', code: 'main :: IO ()\nmain = putStrLn "Hello, World!"\n', check: succeeds('Hello, World!\n') },
  {
    name: 'main in an explicit module Main',
    code: 'module Main (main) where\n\nimport qualified Data.Map.Strict as M\n\nmain :: IO ()\nmain = print (M.toList (M.fromListWith (+) [(c, 1 :: Int) | c <- "mississippi"]))\n',
    check: succeeds("[('i',4),('m',1),('p',2),('s',4)]\n"),
  },
  { name: 'echoes standard input (UTF-8)', code: 'main :: IO ()\nmain = interact id\n', input: ECHO_INPUT, check: succeeds(ECHO_INPUT) },
  {
    name: 'reads numbers from standard input',
    code: 'main :: IO ()\nmain = do\n  xs <- map read . words <$> getContents\n  print (sum xs :: Integer)\n',
    input: '1 2 3\n4\n',
    check: succeeds('10\n'),
  },
  {
    name: 'a compile error is compile_error with the message',
    code: 'main :: IO ()\nmain = putStrLn (1 + True)\n',
    check: compileError('main.hs:2:', 'error'),
  },
  {
    name: 'a non-zero exit is runtime_error with that exit code',
    code: 'import System.Exit\nimport System.IO\n\nmain :: IO ()\nmain = hPutStrLn stderr "exiting 4" >> exitWith (ExitFailure 4)\n',
    check: runtimeError(4, 'exiting 4'),
  },
  { name: 'an uncaught error is runtime_error 1', code: 'main :: IO ()\nmain = print (head ([] :: [Int]))\n', check: runtimeError(1, /head|empty list/) },
  {
    name: 'GHC2021: visible type application without a pragma',
    code: 'main :: IO ()\nmain = do\n  print (read @Int "5" + 1)\n  print (show @Double 2.5)\n',
    check: succeeds('6\n"2.5"\n'),
  },
]);
