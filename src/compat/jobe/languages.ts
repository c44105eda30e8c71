import type { CompilerAvailability } from '../../compilers/availability.js';
import { semverOf } from '../piston/runtimes.js';
import semver from 'semver';

// Jobe's language ids (c, cpp, java, python3…), as each recipe declares them (`jobe`):
// an id is served by the newest installed compiler that declares it, so a CodeRunner
// question keeps working when an operator installs a newer toolchain. Beside each id,
// what Jobe itself does for that language where a CodeRunner question can tell the
// difference: the compile options it adds when the run gives none (Jobe's CTask: warnings
// are errors, C99), the options it always compiles with (gcc without -O: no
// optimisation, so no -Werror=aggressive-loop-optimizations a recipe's -O2 would raise),
// whether it ignores a memory limit (Jobe's JavaTask: the JVM manages its own), and
// whether it checks the program's syntax first (the recipe's check).

export interface JobeLanguage {
  /** Jobe's id. */
  id: string;
  /** The runbox compiler that serves it. */
  compiler: string;
  /** The installed toolchain's version, as Jobe lists it. */
  version: string;
}

export const JOBE_DEFAULTS: Record<string, { compileargs?: string[]; always?: string[]; ignoresMemoryLimit?: boolean; syntaxCheck?: boolean }> = {
  c: { compileargs: ['-Wall', '-Werror', '-std=c99'], always: ['-O0'] },
  cpp: { compileargs: ['-Wall', '-Werror'], always: ['-O0'] },
  java: { ignoresMemoryLimit: true },
  // Jobe's Python3Task compiles with py_compile and its PhpTask runs php -l first: a syntax error is outcome 11.
  python3: { syntaxCheck: true },
  php: { syntaxCheck: true },
};

const order = (v: string) => semverOf(v) ?? '0.0.0';

/** GET languages: one entry per Jobe id an installed compiler serves, sorted by id. */
export function jobeLanguages(available: CompilerAvailability[]): JobeLanguage[] {
  const best = new Map<string, JobeLanguage>();
  for (const c of available) {
    const id = c.entry.jobe;
    if (!c.available || c.version === null || id === undefined) continue;
    const have = best.get(id);
    const newer = !have || semver.gt(order(c.version), order(have.version)) || (semver.eq(order(c.version), order(have.version)) && idNumber(c.id) > idNumber(have.compiler));
    if (newer) best.set(id, { id, compiler: c.id, version: c.version });
  }
  return [...best.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** An id's own version number (gcc-9 above gcc-4.9 where both run GCC 9). */
function idNumber(id: string): number {
  const m = /(\d+(?:\.\d+)?)/.exec(id);
  return m ? Number(m[1]) : 0;
}
