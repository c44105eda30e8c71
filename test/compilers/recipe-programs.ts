import { compilerEntry } from '../../src/compilers/catalogue.js';
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
