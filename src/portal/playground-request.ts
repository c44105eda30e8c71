// The playground's form as a run request, in one place for both of its paths: the
// browser's (over the WebSocket, src/browser/playground) and the server's (the form
// posted without JavaScript, and judged runs: src/portal/routes/playground.tsx). Plain
// data in, plain data out: the browser bundle imports it too.

import { formsInWords } from '../program/compiler-options.js';

export interface PlaygroundProgram {
  compiler: string;
  /** The compiler's own source file name (its recipe's): a lone file of that name is sent as `code`. */
  source: string;
  files: { name: string; content: string }[];
  /** Index of the main file. */
  main: number;
  /** One argument per line. */
  args: string;
  /** Separated by spaces. */
  options: string;
  input: string;
  tests: { input: string; expected: string }[];
  /** A stored problem's id, or ''. */
  problem: string;
}

export interface PlaygroundRequest {
  compiler: string;
  code?: string;
  files?: { name: string; content: string }[];
  main?: string;
  args?: string[];
  compiler_options?: string[];
  input?: string;
  tests?: { input: string; expected_output: string }[];
  problem?: string;
  return_files: true;
}

/** Arguments, one per line (empty lines left out: an argument is never split or joined by a shell). */
export const argsOf = (text: string): string[] => text.split(/\r?\n/).filter((a) => a !== '');

/** Compiler options separated by spaces (-O2 -Wall). */
export const optionsOf = (text: string): string[] => text.split(/\s+/).filter((o) => o !== '');

/** A judged run: against the tests given with expected outputs, or a stored problem. */
export const isJudged = (p: Pick<PlaygroundProgram, 'tests' | 'problem'>): boolean => p.problem !== '' || p.tests.length > 0;

export function playgroundRequest(p: PlaygroundProgram): PlaygroundRequest {
  const main = p.files[p.main] ?? p.files[0];
  const single = p.files.length === 1 && main !== undefined && main.name === p.source;
  const args = argsOf(p.args);
  const options = optionsOf(p.options);
  return {
    compiler: p.compiler,
    ...(single ? { code: main.content } : { files: p.files.map((f) => ({ name: f.name, content: f.content })), ...(main ? { main: main.name } : {}) }),
    ...(args.length > 0 ? { args } : {}),
    ...(options.length > 0 ? { compiler_options: options } : {}),
    ...(p.problem !== ''
      ? { problem: p.problem }
      : p.tests.length > 0
        ? { tests: p.tests.map((t) => ({ input: t.input, expected_output: t.expected })) }
        : p.input !== ''
          ? { input: p.input }
          : {}),
    return_files: true,
  };
}

/** A name for a file added beside `main`: file2.py, file3.py… (its extension, a name not taken). */
export function newFileName(taken: string[], main: string): string {
  const dot = main.lastIndexOf('.');
  const ext = dot > 0 && !main.slice(dot).includes('/') ? main.slice(dot) : '.txt';
  for (let n = taken.length + 1; ; n++) {
    const name = `file${n}${ext}`;
    if (!taken.includes(name)) return name;
  }
}

/** What the compiler options field says under it. */
export function optionsHint(id: string, forms: string[]): string {
  return forms.length === 0 ? `${id} takes no compiler options.` : `Separated by spaces. ${id} allows: ${formsInWords(forms)}.`;
}

/** A refusal in the form's words: a field path of the request (compiler_options.2, args.0, tests.1.input) as the form names it, counted from 1. */
export function inFormWords(message: string): string {
  return message
    .replace(/^invalid run message: /, '')
    .replace(/^compiler_options\.(\d+): /, (_m, n: string) => `Compiler option ${Number(n) + 1}: `)
    .replace(/^args\.(\d+): /, (_m, n: string) => `Argument ${Number(n) + 1}: `)
    .replace(/^tests\.(\d+)\.expected_output: /, (_m, n: string) => `Expected output of test ${Number(n) + 1}: `)
    .replace(/^tests\.(\d+)(\.input)?: /, (_m, n: string) => `Input of test ${Number(n) + 1}: `);
}
