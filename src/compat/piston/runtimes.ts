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

const semverOf = (v: string): string => semver.valid(v) ?? semver.valid(semver.coerce(v)) ?? '0.0.0';

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
  return runtimes.sort((a, b) => firstAt.get(a.language)! - firstAt.get(b.language)! || semver.rcompare(semverOf(a.version), semverOf(b.version)));
}

/** Piston's get_latest_runtime_matching_language_version: name or alias, version as a semver range, highest first. */
export function findRuntime(runtimes: PistonRuntime[], language: string, version: string): PistonRuntime | undefined {
  const valid = (v: string) => semver.valid(v) ?? semver.valid(semver.coerce(v));
  return runtimes
    .filter((rt) => rt.language === language || rt.aliases.includes(language))
    .filter((rt) => {
      const v = valid(rt.version);
      if (!v) return rt.version === version;
      try {
        return semver.satisfies(v, version);
      } catch {
        return false;
      }
    })
    .sort((a, b) => semver.rcompare(valid(a.version) ?? '0.0.0', valid(b.version) ?? '0.0.0'))[0];
}
