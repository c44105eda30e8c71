import { catalogue } from '../compilers/catalogue.js';
import { compilerForFile, type Dialect, type FileLanguage, type LanguageFile } from '../compilers/languages.js';

// Which compiler builds a package's checker, interactor or example submission: a package
// names files, not compilers, so the language table of the recipes
// (src/compilers/languages.ts) says, in the package's dialect. The language is decided
// over every recipe (a `#!…python2` file is Python 2 whether or not Python 2 is installed
// here), then the newest offered compiler of it builds the file; none offered: refused.

export type CompilerForFile = (file: LanguageFile, dialect?: Dialect) => FileLanguage;

export function compilerForPackageFile(available: ReadonlySet<string>, recipesDir = ''): CompilerForFile {
  const known = [...catalogue(recipesDir).entries.values()].filter((e) => !e.retired);
  const entries = known.filter((e) => available.has(e.id));
  return (file, dialect) => {
    const claim = compilerForFile(known, file, dialect);
    // Unclaimed or ambiguous over every recipe: as the offered ones alone say.
    if (claim.compiler === null) return compilerForFile(entries, file, dialect);
    // A shebang claim (Python 2's `#!…python2`) picks among its own kind of compiler only.
    const chosen = known.find((e) => e.id === claim.compiler)!;
    const byShebang = chosen.shebang && new RegExp(chosen.shebang.pattern).test(file.firstLine) ? chosen.shebang.pattern : undefined;
    const offered = entries.filter((e) => e.language === claim.language && (byShebang === undefined || e.shebang?.pattern === byShebang));
    if (offered.length === 0) return { compiler: null, reason: `it is for ${claim.compiler}, which is not installed here` };
    return compilerForFile(offered, file, dialect);
  };
}
