import { expect } from 'chai';
import { catalogue } from '../../src/compilers/catalogue.js';
import { compilerForFile, firstLine, languageExtensions, type Dialect } from '../../src/compilers/languages.js';

// The language table the recipes make (extensions, dialects, shebang), checked against
// the judges' own lists: problemtools' config/languages.yaml (Kattis packages) and
// DOMjudge's default languages (webapp/src/DataFixtures/DefaultData/LanguageFixture.php),
// each extension to the language runbox builds it as. Where runbox has no such
// language (Ada, POSIX sh as its own), the row is left out.

const entries = [...catalogue().entries.values()].filter((e) => !e.retired);
const languageOf = (name: string, dialect?: Dialect, first = '') => {
  const found = compilerForFile(entries, { name, firstLine: first }, dialect);
  return found.compiler === null ? null : found.language;
};

/** problemtools' languages.yaml: its `files` globs, as extensions, and runbox's language for each. */
const KATTIS: [string, string[]][] = [
  ['c', ['.c']],
  ['c++', ['.cc', '.C', '.cpp', '.cxx', '.c++']],
  ['csharp', ['.cs']],
  ['cobol', ['.cob']],
  ['fsharp', ['.fs']],
  ['go', ['.go']],
  ['haskell', ['.hs']],
  ['java', ['.java']],
  ['javascript', ['.js']],
  ['kotlin', ['.kt']],
  ['common lisp', ['.lisp', '.cl']],
  ['ocaml', ['.ml']],
  ['objective-c', ['.m']],
  ['pascal', ['.pas']],
  ['php', ['.php']],
  ['prolog', ['.pl']],
  ['python', ['.py', '.py2', '.py3']],
  ['ruby', ['.rb']],
  ['rust', ['.rs']],
  ['scala', ['.sc', '.scala']],
];

/** DOMjudge's default language table: its extensions, and runbox's language for each. */
const DOMJUDGE: [string, string[]][] = [
  ['awk', ['.awk']],
  ['bash', ['.bash', '.sh']],
  ['c', ['.c']],
  ['c++', ['.cpp', '.cc', '.cxx', '.c++']],
  ['csharp', ['.csharp', '.cs']],
  ['fortran', ['.f95', '.f90']],
  ['go', ['.go']],
  ['haskell', ['.hs', '.lhs']],
  ['java', ['.java']],
  ['javascript', ['.js', '.mjs']],
  ['lua', ['.lua']],
  ['kotlin', ['.kt']],
  ['pascal', ['.pas', '.p']],
  ['perl', ['.pl']],
  ['prolog', ['.plg']],
  ['python', ['.py']],
  ['ocaml', ['.ml']],
  ['r', ['.R']],
  ['ruby', ['.rb']],
  ['rust', ['.rs']],
  ['scala', ['.scala']],
  ['swift', ['.swift']],
];

describe('the language table of the recipes', () => {
  for (const [dialect, table] of [['kattis', KATTIS], ['domjudge', DOMJUDGE]] as const) {
    it(`gives every extension of ${dialect === 'kattis' ? "problemtools' languages.yaml" : "DOMjudge's default languages"} the judge's language`, () => {
      const got = table.flatMap(([, exts]) => exts.map((ext) => [ext, languageOf(`main${ext}`, dialect)]));
      expect(Object.fromEntries(got)).to.deep.equal(Object.fromEntries(table.flatMap(([language, exts]) => exts.map((ext) => [ext, language]))));
    });
  }

  it('.pl is Prolog in Kattis packages, Perl in DOMjudge packages and elsewhere', () => {
    expect(languageOf('validator.pl', 'kattis')).to.equal('prolog');
    expect(languageOf('validator.pl', 'domjudge')).to.equal('perl');
    expect(languageOf('validator.pl')).to.equal('perl');
  });

  it(".py is Python 3 unless its first line says python2 (problemtools' shebang rule); .py2 is Python 2", () => {
    const python = (name: string, first: string) => compilerForFile(entries, { name, firstLine: first }).compiler;
    expect(python('a.py', '')).to.equal('python-3.13');
    expect(python('a.py', '#!/usr/bin/env python3')).to.equal('python-3.13');
    expect(python('a.py', '#!/usr/bin/python2')).to.equal('python-2.7.18');
    expect(python('a.py', '#!/usr/bin/env python2.7')).to.equal('python-2.7.18');
    expect(python('a.py', '#!/usr/bin/python2x')).to.equal('python-3.13');
    expect(python('a.py2', '')).to.equal('python-2.7.18');
    expect(firstLine(Buffer.from('#!/usr/bin/env python2\nprint 1\n'))).to.equal('#!/usr/bin/env python2');
  });

  it('case matters: .C is C++, .c is C; .R and .r are R', () => {
    expect(languageOf('a.C')).to.equal('c++');
    expect(languageOf('a.c')).to.equal('c');
    expect(languageOf('a.R')).to.equal('r');
    expect(languageOf('a.r')).to.equal('r');
  });

  it('an extension two languages take with no dialect to settle it is ambiguous, said so; one nobody takes is said too', () => {
    expect(compilerForFile(entries, { name: 'a.m', firstLine: '' })).to.deep.equal({ compiler: null, reason: '.m is objective-c or octave here' });
    expect(languageOf('a.m', 'kattis')).to.equal('objective-c');
    expect(compilerForFile(entries, { name: 'a.xyz', firstLine: '' })).to.deep.equal({ compiler: null, reason: 'no language offered here takes .xyz files' });
    expect(compilerForFile(entries, { name: 'Makefile', firstLine: '' })).to.deep.equal({ compiler: null, reason: 'it has no extension' });
  });

  it('picks the newest offered compiler of the language; only offered ones count', () => {
    const offered = (ids: string[]) => entries.filter((e) => ids.includes(e.id));
    expect(compilerForFile(offered(['g++-4.9', 'g++-9']), { name: 'v.cc', firstLine: '' }).compiler).to.equal('g++-9');
    expect(compilerForFile(offered(['g++-4.9', 'g++-9', 'g++-14', 'clang++-14']), { name: 'v.cpp', firstLine: '' }).compiler).to.equal('g++-14');
    expect(compilerForFile(offered(['gcc-9']), { name: 'v.cc', firstLine: '' }).compiler).to.equal(null);
    expect(compilerForFile(offered(['perl-5.36']), { name: 'v.pl', firstLine: '' }, 'kattis').compiler).to.equal('perl-5.36');
  });

  it("defaults a recipe's extensions to its source's and its sources'", () => {
    expect(languageExtensions({ language: 'x', version: '1', source: 'main.f90', sources: ['.f90', '.f'] })).to.deep.equal(['.f90', '.f']);
    expect(languageExtensions({ language: 'x', version: '1', source: 'run' })).to.deep.equal([]);
    expect(languageExtensions({ language: 'x', version: '1', source: 'main.cpp', extensions: ['.cc'] })).to.deep.equal(['.cc']);
  });
});
