import { catalogue } from '../compilers/catalogue.js';

// Which compiler builds a package's checker or interactor: the newest offered one whose
// recipe's source file has the extension of the program's main file (.cpp: the newest
// g++ offered), since a package names files, not compilers.

/** "9.3.0" before "10.2.1": numeric parts compared as numbers. */
function compareVersions(a: string, b: string): number {
  const pa = a.split(/[^0-9]+/).filter(Boolean).map(Number);
  const pb = b.split(/[^0-9]+/).filter(Boolean).map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export function compilerForExtension(available: ReadonlySet<string>, recipesDir = ''): (extension: string) => string | null {
  const entries = [...catalogue(recipesDir).entries.values()].filter((e) => !e.retired && available.has(e.id));
  return (extension) => {
    if (extension === '') return null;
    const matching = entries.filter((e) => e.source.toLowerCase().endsWith(extension));
    // Ids of one toolchain differ by the standard they compile at (g++-4.9 and g++-9 are both
    // GCC 9 here, at GNU++98 and GNU++14): the id with the higher version in its name wins.
    matching.sort((a, b) => compareVersions(b.version, a.version) || compareVersions(b.id, a.id) || a.id.localeCompare(b.id));
    return matching[0]?.id ?? null;
  };
}
