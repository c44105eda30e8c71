import type { CompilerAvailability } from '../../compilers/availability.js';
import { catalogue, type CompilerEntry } from '../../compilers/catalogue.js';

// Judge0 CE's language ids and names, as each recipe declares them (`judge0`), so that
// ids clients hard-code keep working; the names carry the toolchain version installed here.

/** Judge0's display name of a compiler: the recipe's `judge0.name` with `{version}` filled in. */
export function judge0Name(entry: CompilerEntry, version: string): string {
  const template = entry.judge0?.name ?? `${entry.language} ({version})`;
  return template.replaceAll('{version}', version);
}

/** The compiler a Judge0 language id stands for; a retired one too (admission refuses it, naming its successor). */
export function compilerOfLanguage(id: number, recipesDir = ''): CompilerEntry | undefined {
  for (const entry of catalogue(recipesDir).entries.values()) if (entry.judge0?.id === id) return entry;
  return undefined;
}

/** GET /judge0/languages: the installed compilers that have a Judge0 id, as Judge0 lists its active languages. */
export function judge0Languages(available: CompilerAvailability[]): { id: number; name: string }[] {
  return available
    .flatMap((c) => (c.available && c.version !== null && c.entry.judge0 ? [{ id: c.entry.judge0.id, name: judge0Name(c.entry, c.version) }] : []))
    .sort((a, b) => a.id - b.id);
}
