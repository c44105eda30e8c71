import semver from 'semver';
import type { CompilerAvailability } from '../../compilers/availability.js';
import type { CompilerId } from '../../compilers/ids.js';

// runbox's compilers under the names Piston gives them (engineer-man/piston packages):
// clients such as piston-client match `language` exactly and pick the highest
// `version`; Piston itself also matches aliases and semver ranges of the version.

interface PistonName {
  language: string;
  aliases: string[];
  runtime?: string;
}

export const PISTON_NAMES: Record<CompilerId, PistonName> = {
  'python-3.9.7': { language: 'python', aliases: ['py', 'py3', 'python3', 'python3.9'] },
  'python-2.7.18': { language: 'python', aliases: ['py2', 'python2'] },
  'gcc-4.9': { language: 'c', aliases: ['gcc'], runtime: 'gcc' },
  'g++-4.9': { language: 'c++', aliases: ['cpp', 'g++'], runtime: 'gcc' },
  'openjdk-11': { language: 'java', aliases: [] },
  'dotnet-csharp-5': { language: 'csharp.net', aliases: ['csharp', 'c#', 'cs', 'c#.net', 'cs.net'], runtime: 'dotnet' },
  'dotnet-fsharp-5': { language: 'fsharp.net', aliases: ['fsharp', 'fs', 'f#', 'fs.net', 'f#.net'], runtime: 'dotnet' },
  'php-8.1': { language: 'php', aliases: ['php8'] },
  'ruby-3.0.2': { language: 'ruby', aliases: ['ruby3', 'rb'] },
  'haskell-9.2.7': { language: 'haskell', aliases: ['hs'] },
};

export interface PistonRuntime {
  language: string;
  version: string;
  aliases: string[];
  runtime?: string;
  compiler: CompilerId;
}

/** One runtime per installed compiler, with the installed toolchain's version. */
export function pistonRuntimes(available: CompilerAvailability[]): PistonRuntime[] {
  return available
    .filter((c) => c.available && c.version !== null)
    .map((c) => {
      const n = PISTON_NAMES[c.id];
      return { language: n.language, version: c.version!, aliases: n.aliases, ...(n.runtime ? { runtime: n.runtime } : {}), compiler: c.id };
    });
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
