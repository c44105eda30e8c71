import type { CompilerAvailability } from '../../compilers/availability.js';
import type { CompilerId } from '../../compilers/ids.js';

// Judge0 CE's language ids for runbox's compilers, so that ids clients hard-code keep
// working (Judge0 CE 1.13's own ids), and the names Judge0 gives them, with the
// toolchain version installed here.

export const JUDGE0_LANGUAGES: Record<CompilerId, { id: number; name: (version: string) => string }> = {
  'python-3.9.7': { id: 71, name: (v) => `Python (${v})` },
  'python-2.7.18': { id: 70, name: (v) => `Python (${v})` },
  'gcc-4.9': { id: 50, name: (v) => `C (GCC ${v})` },
  'g++-4.9': { id: 54, name: (v) => `C++ (GCC ${v})` },
  'openjdk-11': { id: 62, name: (v) => `Java (OpenJDK ${v})` },
  'dotnet-csharp-5': { id: 51, name: (v) => `C# (.NET ${v})` },
  'dotnet-fsharp-5': { id: 87, name: (v) => `F# (.NET ${v})` },
  'php-8.1': { id: 68, name: (v) => `PHP (${v})` },
  'ruby-3.0.2': { id: 72, name: (v) => `Ruby (${v})` },
  'haskell-9.2.7': { id: 61, name: (v) => `Haskell (GHC ${v})` },
};

export function compilerOfLanguage(id: number): CompilerId | undefined {
  return (Object.keys(JUDGE0_LANGUAGES) as CompilerId[]).find((c) => JUDGE0_LANGUAGES[c].id === id);
}

/** GET /judge0/languages: the installed compilers, as Judge0 lists its active languages. */
export function judge0Languages(available: CompilerAvailability[]): { id: number; name: string }[] {
  return available
    .filter((c) => c.available && c.version !== null)
    .map((c) => ({ id: JUDGE0_LANGUAGES[c.id].id, name: JUDGE0_LANGUAGES[c.id].name(c.version!) }))
    .sort((a, b) => a.id - b.id);
}
