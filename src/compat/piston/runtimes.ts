import semver from 'semver';
import type { CompilerAvailability } from '../../compilers/availability.js';

// runbox's compilers under the names Piston gives them (engineer-man/piston packages),
// as each recipe declares them (`piston`). Clients such as piston-client match
// `language` exactly and pick the highest `version`; Piston itself also matches
// aliases and semver ranges of the version, highest first.

export interface PistonRuntime {
  language: string;
  version: string;
  aliases: string[];
  runtime?: string;
  compiler: string;
}

/**
 * A toolchain version as semver, for ranges and ordering: its first three numbers, each
 * without leading zeros (NASM's 2.16.01 is 2.16.1, Raku's 2022.12 is 2022.12.0), which
 * neither semver.valid nor semver.coerce takes. Null when it does not start with a number.
 */
export function semverOf(version: string): string | null {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(version);
  return m ? `${Number(m[1])}.${Number(m[2] ?? 0)}.${Number(m[3] ?? 0)}` : null;
}
const order = (v: string): string => semverOf(v) ?? '0.0.0';

/**
 * One runtime per installed compiler, with the installed toolchain's version. The
 * runtimes of one language are listed together, highest version first, so a client that
 * takes the first match of a name gets the newest (languages in the catalogue's order).
 */
export function pistonRuntimes(available: CompilerAvailability[]): PistonRuntime[] {
  const runtimes = available
    .filter((c) => c.available && c.version !== null && c.entry.piston !== undefined)
    .map((c): PistonRuntime => {
      const n = c.entry.piston!;
      return { language: n.language, version: c.version!, aliases: n.aliases, ...(n.runtime ? { runtime: n.runtime } : {}), compiler: c.id };
    });
  const firstAt = new Map<string, number>();
  runtimes.forEach((rt, i) => firstAt.has(rt.language) || firstAt.set(rt.language, i));
  return runtimes.sort((a, b) => firstAt.get(a.language)! - firstAt.get(b.language)! || semver.rcompare(order(a.version), order(b.version)));
}

/**
 * Piston's get_latest_runtime_matching_language_version: name or alias, version as a
 * semver range, highest first. A runtime is found by the version it lists, written as
 * listed or as semver, and by any range its semver form satisfies.
 */
export function findRuntime(runtimes: PistonRuntime[], language: string, version: string): PistonRuntime | undefined {
  return runtimes
    .filter((rt) => rt.language === language || rt.aliases.includes(language))
    .filter((rt) => {
      if (rt.version === version) return true;
      const v = semverOf(rt.version);
      if (!v) return false;
      try {
        return semver.satisfies(v, version) || semver.satisfies(v, semverOf(version) ?? version);
      } catch {
        return false;
      }
    })
    .sort((a, b) => semver.rcompare(order(a.version), order(b.version)))[0];
}
