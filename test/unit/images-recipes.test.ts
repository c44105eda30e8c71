import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { catalogue, defaultImages, loadRecipes, whollyRetired } from '../../src/compilers/catalogue.js';
import { INTERFACE_IDS } from '../../src/compilers/ids.js';
import { entryComponents, ImportRefused, symlinkStaysInside } from '../../src/images/import.js';
import { versionFromProbe } from '../../src/images/probe.js';
import { imagePackages } from '../../src/compilers/recipe.js';
import { parseManifest } from '../../src/images/manifest.js';
import { buildInputs, builtFrom, canonicalJson, recipeHash, selectRecipes } from '../../src/images/recipes.js';

describe('image recipes', () => {
  it('load, and together serve all ten identifiers of the contract', () => {
    const recipes = loadRecipes();
    expect(recipes.length).to.be.at.least(8);
    expect([...catalogue().entries.keys()]).to.include.members([...INTERFACE_IDS]);
  });

  it('name the images the brief asks for, on the stated suites', () => {
    const bySuite = Object.fromEntries(loadRecipes().map((r) => [r.image, r.suite]));
    expect(bySuite).to.include({ 'python3.9': 'bullseye', gcc: 'bullseye', 'python2.7': 'bullseye', 'openjdk-11': 'bullseye', php: 'bookworm', ruby: 'bookworm', ghc: 'trixie', dotnet: 'bookworm' });
    const dotnet = loadRecipes().find((r) => r.image === 'dotnet');
    expect(dotnet?.dotnetSdk).to.equal(true);
    expect(Object.keys(dotnet?.compilers ?? {}).sort()).to.deep.equal(['dotnet-csharp-5', 'dotnet-fsharp-5']);
  });

  it('use absolute paths for every probe, compile and run program', () => {
    for (const [id, entry] of catalogue().entries) {
      expect(entry.probe[0], `${id} probe`).to.match(/^\//);
      if (entry.compile) expect(entry.compile[0], `${id} compile`).to.match(/^\//);
      if (entry.check) expect(entry.check[0], `${id} check`).to.match(/^\//);
      expect(entry.run[0], `${id} run`).to.match(/^(\/|\.\/)/);
    }
  });

  it("check interpreted programs before a judged run's first test as the judges do (py_compile, ruby -c, perl -c, php -l, node --check, bash -n, luac -p, R's parse)", () => {
    const checks = Object.fromEntries([...catalogue().entries].filter(([, e]) => e.check).map(([id, e]) => [id, e.check!.slice(1).join(' ')]));
    expect(checks).to.deep.equal({
      'python-3.9.7': '-m py_compile {sources}',
      'python-2.7.18': '-m py_compile {sources}',
      'php-8.1': '-d display_errors=stderr -l {file}',
      'ruby-3.0.2': '-c {file}',
      'bash-5.2': '-n {file}',
      'lua-5.4': '-p {file}',
      'nodejs-18': '--check {file}',
      'nodejs-20': '--check {file}',
      'perl-5.36': '-I/box -c {file}',
      'php-8.4': '-d display_errors=stderr -l {file}',
      'python-3.11': '-m py_compile {sources}',
      'python-3.13': '-m py_compile {sources}',
      'r-4.2': '--vanilla -e for (f in commandArgs(TRUE)) invisible(parse(f)) {file}',
      'ruby-3.3': '-c {file}',
    });
    for (const [id, e] of catalogue().entries) if (e.check) expect(e.compile, id).to.equal(undefined);
  });

  it('hash canonically: key order and formatting do not matter, content does', () => {
    const recipe = loadRecipes().find((r) => r.image === 'python3.9')!;
    const reordered = JSON.parse(JSON.stringify(Object.fromEntries(Object.entries(recipe).reverse())));
    expect(canonicalJson(reordered)).to.equal(canonicalJson(recipe));
    expect(recipeHash(reordered)).to.equal(recipeHash(recipe));
    expect(recipeHash({ ...recipe, packages: [...recipe.packages, 'extra'] })).to.not.equal(recipeHash(recipe));
    expect(recipeHash(recipe)).to.match(/^[0-9a-f]{64}$/);
  });

  it('hash only what changes the built image: run-only edits need no rebuild', () => {
    const recipe = loadRecipes().find((r) => r.image === 'gcc')!;
    const hash = recipeHash(recipe);
    const [id, compiler] = Object.entries(recipe.compilers)[0]!;
    const withCompiler = (c: object) => ({ ...recipe, compilers: { ...recipe.compilers, [id]: { ...compiler, ...c } } });
    // How programs compile and run, and what is said about the image, are read at run time.
    const runOnly = {
      'run command': withCompiler({ run: ['/usr/bin/env', 'true'] }),
      'compile command': withCompiler({ compile: ['/usr/bin/gcc', '-O0', 'main.c'] }),
      artifacts: withCompiler({ artifacts: ['main', 'other'] }),
      'source file name': withCompiler({ source: 'prog.c' }),
      'run-time env': withCompiler({ env: { LANG: 'C.UTF-8', EXTRA: '1' } }),
      'hello program': withCompiler({ hello: { code: 'x', output: 'y' } }),
      'stated version': withCompiler({ version: '99.9' }),
      description: { ...recipe, description: 'another description' },
    };
    for (const [what, edited] of Object.entries(runOnly)) expect(recipeHash(edited), what).to.equal(hash);
    // What goes into the tree or the manifest does change it.
    const buildInputs = {
      packages: { ...recipe, packages: [...recipe.packages, 'extra'] },
      suite: { ...recipe, suite: 'bookworm' as const },
      'the .NET SDK': { ...recipe, dotnetSdk: true },
      probe: withCompiler({ probe: ['/usr/bin/gcc', '--version', '-v'] }),
      'a compiler more': { ...recipe, compilers: { ...recipe.compilers, 'gcc-extra': compiler } },
      'a compiler fewer': { ...recipe, compilers: Object.fromEntries(Object.entries(recipe.compilers).slice(1)) },
    };
    for (const [what, edited] of Object.entries(buildInputs)) expect(recipeHash(edited), what).to.not.equal(hash);
  });

  it('hash a compiler\'s libraries by package and probe; a recipe without libraries hashes as before the field existed', () => {
    const recipe = loadRecipes().find((r) => r.image === 'trixie-interpreters')!;
    const hash = recipeHash(recipe);
    const python = recipe.compilers['python-3.13']!;
    const numpy = python.libraries!['numpy']!;
    const withNumpy = (l: object) => ({ ...recipe, compilers: { ...recipe.compilers, 'python-3.13': { ...python, libraries: { ...python.libraries, numpy: { ...numpy, ...l } } } } });
    expect(recipeHash(withNumpy({ version: '0.1', use: 'import numpy' })), 'stated version, use').to.equal(hash);
    expect(recipeHash(withNumpy({ package: 'python3-numpy-dev' })), 'package').to.not.equal(hash);
    expect(recipeHash(withNumpy({ probe: ['/usr/bin/python3.13', '-V'] })), 'probe').to.not.equal(hash);
    const { libraries: _dropped, ...bare } = python;
    expect(recipeHash({ ...recipe, compilers: { ...recipe.compilers, 'python-3.13': bare } }), 'no libraries').to.not.equal(hash);
    // The recipes that ship no library keep the hash their installed images record.
    const gcc = loadRecipes().find((r) => r.image === 'gcc')!;
    expect(JSON.stringify(buildInputs(gcc))).to.not.include('libraries');
  });

  it('hash a recipe\'s links (name and target); a recipe without links hashes as before the field existed', () => {
    const recipe = loadRecipes().find((r) => r.image === 'multi-file')!;
    const hash = recipeHash(recipe);
    const links = recipe.links!;
    expect(links['/usr/local/gcc-9.2.0/bin/g++']).to.equal('/usr/bin/g++');
    expect(recipeHash({ ...recipe, links: { ...links, '/usr/local/gcc-9.2.0/bin/g++': '/usr/bin/g++-12' } }), 'target').to.not.equal(hash);
    expect(recipeHash({ ...recipe, links: { ...links, '/usr/local/bin/g++': '/usr/bin/g++' } }), 'a link more').to.not.equal(hash);
    const gcc = loadRecipes().find((r) => r.image === 'gcc')!;
    expect(JSON.stringify(buildInputs(gcc))).to.not.include('links');
  });

  it('install the libraries\' packages after the recipe\'s own, each once', () => {
    const recipe = loadRecipes().find((r) => r.image === 'trixie-interpreters')!;
    const packages = imagePackages(recipe);
    expect(packages.slice(0, recipe.packages.length)).to.deep.equal(recipe.packages);
    expect(packages).to.include.members(['python3-numpy', 'python3-sklearn', 'python3-matplotlib', 'node-lodash']);
    expect(new Set(packages).size).to.equal(packages.length);
    const twice = { ...recipe, packages: [...recipe.packages, 'python3-numpy'] };
    expect(imagePackages(twice).filter((p) => p === 'python3-numpy')).to.have.length(1);
    expect(imagePackages(loadRecipes().find((r) => r.image === 'gcc')!)).to.deep.equal(loadRecipes().find((r) => r.image === 'gcc')!.packages);
  });

  it('take an image whose manifest records the hash of the whole, unchanged recipe (before the hash covered build inputs only) as built from it', () => {
    const recipe = loadRecipes().find((r) => r.image === 'python3.9')!;
    const whole = createHash('sha256').update(canonicalJson(recipe)).digest('hex');
    expect(builtFrom(whole, recipe)).to.equal(true);
    expect(builtFrom(recipeHash(recipe), recipe)).to.equal(true);
    expect(builtFrom(whole, { ...recipe, description: 'edited' })).to.equal(false);
    expect(builtFrom('ab'.repeat(32), recipe)).to.equal(false);
  });

  it('select by compiler id, image name, all and the default set', () => {
    expect(selectRecipes(['g++-4.9']).map((r) => r.image)).to.deep.equal(['gcc']);
    expect(selectRecipes(['python3.9', 'python-3.9.7']).map((r) => r.image)).to.deep.equal(['python3.9']);
    expect(selectRecipes([], { defaults: true }).map((r) => r.image).sort()).to.deep.equal(['gcc', 'python3.9']);
    expect(defaultImages().sort()).to.deep.equal(['gcc', 'python3.9']);
    expect(selectRecipes(['all']).length).to.equal(loadRecipes().filter((r) => !whollyRetired(r)).length);
    expect(() => selectRecipes(['no-such-language'])).to.throw(/no recipe for "no-such-language"/);
  });
});

describe('image manifests', () => {
  const manifest = (compilers: unknown) => JSON.stringify({ image: 'x', suite: 'trixie', recipeHash: 'a'.repeat(64), digest: 'b'.repeat(64), builtAt: 'now', compilers });

  it('record each compiler\'s libraries beside its version, and stay valid without them', () => {
    expect(parseManifest(manifest({ 'python-3.13': { version: '3.13.5', libraries: { numpy: '2.2.4' } } })).compilers['python-3.13']!.libraries).to.deep.equal({ numpy: '2.2.4' });
    expect(parseManifest(manifest({ 'gcc-9': { version: '9.3.0' } })).compilers['gcc-9']!.libraries).to.equal(undefined);
  });

  it('refuse library lists that are not name → version strings, or too long', () => {
    expect(() => parseManifest(manifest({ p: { version: '1', libraries: { numpy: 2 } } }))).to.throw(/manifest.json is invalid at \/compilers\/p\/libraries\/numpy/);
    expect(() => parseManifest(manifest({ p: { version: '1', libraries: { numpy: 'x'.repeat(129) } } }))).to.throw(/invalid/);
    const many = Object.fromEntries(Array.from({ length: 257 }, (_, i) => [`lib${i}`, '1.0']));
    expect(() => parseManifest(manifest({ p: { version: '1', libraries: many } }))).to.throw(/invalid/);
  });
});

describe('version probe parsing', () => {
  for (const [output, version] of [
    ['Python 3.9.2', '3.9.2'],
    ['gcc-9 (Debian 9.3.0-22) 9.3.0\nCopyright (C) 2019 Free Software Foundation, Inc.', '9.3.0'],
    ['PHP 8.2.29 (cli) (built: Jul  3 2025 16:16:05) (NTS)', '8.2.29'],
    ['ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) [x86_64-linux-gnu]', '3.1.2'],
    ['javac 11.0.28', '11.0.28'],
    ['9.6.6', '9.6.6'],
    // Libraries probed with dpkg-query: an epoch, a fourth number, a Debian revision.
    ['1:2.2.4+ds-1', '2.2.4'],
    ['1.83.0.2+b2', '1.83.0'],
    ['2.14.0+ds-1+deb13u1', '2.14.0'],
  ] as const) {
    it(`reads ${version} from ${JSON.stringify(output.split('\n')[0])}`, () => {
      expect(versionFromProbe(output)).to.equal(version);
    });
  }
  it('finds nothing in output without a version', () => {
    expect(versionFromProbe('command not found')).to.equal(undefined);
  });
});

describe('archive entry names', () => {
  it('accept plain names under rootfs/ and the manifest', () => {
    expect(entryComponents('rootfs/usr/bin/python3')).to.deep.equal(['rootfs', 'usr', 'bin', 'python3']);
    expect(entryComponents('./rootfs//usr/')).to.deep.equal(['rootfs', 'usr']);
    expect(entryComponents('manifest.json')).to.deep.equal(['manifest.json']);
  });
  for (const [name, why] of [
    ['/etc/passwd', /absolute path/],
    ['rootfs/../../etc/passwd', /'\.\.' component/],
    ['../x', /'\.\.' component/],
    ['etc/passwd', /only manifest.json and rootfs/],
    ['manifest.json/x', /only manifest.json and rootfs/],
    ['./', /empty name/],
  ] as const) {
    it(`refuse ${JSON.stringify(name)}`, () => {
      expect(() => entryComponents(name)).to.throw(ImportRefused, why);
    });
  }
  it('keep absolute symlinks (resolved inside the image) and refuse relative ones that climb out', () => {
    expect(symlinkStaysInside(['usr', 'bin'], '/etc/alternatives/python3')).to.equal(true);
    expect(symlinkStaysInside(['usr', 'bin'], '../lib/x')).to.equal(true);
    expect(symlinkStaysInside(['usr', 'bin'], '../../etc')).to.equal(true);
    expect(symlinkStaysInside(['usr', 'bin'], '../../../etc')).to.equal(false);
    expect(symlinkStaysInside([], '..')).to.equal(false);
    expect(symlinkStaysInside(['a'], 'b/../../..')).to.equal(false);
  });
});
