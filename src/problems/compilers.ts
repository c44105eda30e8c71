import { catalogue } from '../compilers/catalogue.js';
import { compilerForFile, type Dialect, type FileLanguage, type LanguageFile } from '../compilers/languages.js';

// Which compiler builds a package's checker or interactor: a package names files, not
// compilers, so the language table of the recipes (src/compilers/languages.ts) says,
// among the compilers offered here, in the package's dialect.

export type CompilerForFile = (file: LanguageFile, dialect?: Dialect) => FileLanguage;

export function compilerForPackageFile(available: ReadonlySet<string>, recipesDir = ''): CompilerForFile {
  const entries = [...catalogue(recipesDir).entries.values()].filter((e) => !e.retired && available.has(e.id));
  return (file, dialect) => compilerForFile(entries, file, dialect);
}
