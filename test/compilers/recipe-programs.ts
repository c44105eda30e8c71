import { compilerEntry } from '../../src/compilers/catalogue.js';
import type { ProgramRequest } from '../../src/program/fields.js';
import { extensionOf } from '../../src/program/paths.js';
import { placeSource } from '../../src/program/source-file.js';
import { succeeds, type Case } from './harness.js';

// The hello and level programs a recipe declares, as cases: what the catalogue shows
// users is what runs.

export function recipePrograms(id: string): Case[] {
  const entry = compilerEntry(id);
  if (!entry) return [];
  return [
    { name: "the recipe's hello program", code: entry.hello.code, check: succeeds(entry.hello.output) },
    { name: `the recipe's level program (${entry.level.proves})`, code: entry.level.code, check: succeeds(entry.level.output) },
  ];
}

/** Languages where a program file's own name must be a module or class name: the name that could be an option is its directory's. */
const NAMED_BY_DIRECTORY = new Set(['nim-1.6', 'groovy-2.4', 'octave-7.3']);
/** The content a source file named -x.<ext> needs to compile beside the hello program, where empty is not enough. */
const BESIDE: Record<string, string> = { '.d': 'module x;\n', '.fs': 'module X\n', '.go': 'package main\n' };

/**
 * The recipe's hello program with a file whose name a tool would read as an option
 * (src/program/plan.ts passes it as ./-x…): the main file named -x.<ext>, or, where the
 * recipe compiles several sources (or builds a Go package), the hello program as it is
 * with a file -x.<ext> of each source extension beside it.
 */
export function dashNameCase(id: string): Case[] {
  const entry = compilerEntry(id);
  if (!entry) return [];
  const ext = extensionOf(entry.source);
  const hello = entry.hello;
  const beside = entry.sources ?? (id.startsWith('go-') ? ['.go'] : undefined);
  const program: Omit<ProgramRequest, 'code'> = beside
    ? { files: [{ name: placeSource(entry, hello.code).fileName, content: hello.code }, ...beside.map((x) => ({ name: `-x${x}`, content: BESIDE[x] ?? '' }))] }
    : { files: [{ name: NAMED_BY_DIRECTORY.has(id) ? `-d/main${ext}` : `-x${ext}`, content: hello.code }] };
  return [{ name: `a file named ${program.files!.slice(-1)[0]!.name} is a file, never an option`, code: '', program, check: succeeds(hello.output) }];
}
