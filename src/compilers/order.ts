// The order compilers are offered in a list a person picks from (the playground): each
// language where it first appears, and within it the newest first, versions compared
// as numbers (gcc 12 before gcc 9, 3.10 before 3.9), so the first C or C++ offered is
// the newest toolchain, with its current default standard.

/** A version's numbers in order: "3.10.2" → [3, 10, 2], "12.2.0-14" → [12, 2, 0, 14]. */
const numbers = (version: string): number[] => (version.match(/\d+/g) ?? []).map(Number);

/** Newer first: by each number in turn; more numbers after equal ones is newer. */
export function compareVersionsNewestFirst(a: string, b: string): number {
  const x = numbers(a);
  const y = numbers(b);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (y[i] ?? -1) - (x[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

export function newestFirst<T extends { language: string; version: string | null; entry: { version: string } }>(compilers: readonly T[]): T[] {
  const languages = new Map<string, number>();
  compilers.forEach((c) => languages.has(c.language) || languages.set(c.language, languages.size));
  return [...compilers].sort((a, b) => languages.get(a.language)! - languages.get(b.language)! || compareVersionsNewestFirst(a.version ?? a.entry.version, b.version ?? b.entry.version));
}
