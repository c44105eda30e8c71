import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { ApiError } from '../../src/api/errors.js';
import { assertRunnable } from '../../src/api/middleware/admission.js';
import { availabilityOf, compilerAvailability } from '../../src/compilers/availability.js';
import { buildCatalogue, catalogue, COMPILER_ID, loadRecipes, offeredIds, type CatalogueRecipe } from '../../src/compilers/catalogue.js';
import { INTERFACE_IDS } from '../../src/compilers/ids.js';
import type { ImageRecipe } from '../../src/compilers/recipe.js';
import { compilerOfLanguage, judge0Languages } from '../../src/compat/judge0/languages.js';
import { findRuntime, pistonRuntimes } from '../../src/compat/piston/runtimes.js';
import { selectRecipes } from '../../src/images/recipes.js';
import { RECIPES_DIR } from '../../src/util/paths.js';

// Every recipe of rootfs/ as the catalogue reads it, and the operator's recipes
// directory beside it: conflicts, bad files, retired ids, re-reading.

const builtIn = loadRecipes(RECIPES_DIR);
const allCompilers = builtIn.flatMap((r) => Object.entries(r.compilers).map(([id, c]) => ({ id, c, image: r.image })));

describe('every built-in recipe', () => {
  it('passes the schema and names its file after its image (loadRecipes throws otherwise)', () => {
    expect(builtIn.length).to.be.at.least(8);
    for (const r of builtIn) expect(Object.keys(r.compilers).length, r.image).to.be.at.least(1);
  });

  it('declares compiler ids that are unique across recipes and plain', () => {
    const ids = allCompilers.map((x) => x.id);
    expect(new Set(ids).size).to.equal(ids.length);
    for (const id of ids) expect(id).to.match(COMPILER_ID);
    expect(ids).to.include.members([...INTERFACE_IDS]);
  });

  it('declares Judge0 ids that are unique across recipes (never reused, retired ones included)', () => {
    const judge0 = allCompilers.flatMap((x) => (x.c.judge0 ? [x.c.judge0.id] : []));
    expect(new Set(judge0).size).to.equal(judge0.length);
    // The ten keep Judge0 CE's own ids, but for C and C++: Judge0's 50 and 54 are GCC 9 at
    // its own default standards, which gcc-9 and g++-9 are (the ten's compile as GCC 4.9 did).
    const idOf = (id: string) => allCompilers.find((x) => x.id === id)!.c.judge0?.id;
    expect(INTERFACE_IDS.map(idOf)).to.deep.equal([71, 70, undefined, undefined, 62, 51, 87, 68, 72, 61]);
    expect(['gcc-9', 'g++-9'].map(idOf)).to.deep.equal([50, 54]);
    // Judge0 CE 1.13's GCC 7.4 and 8.3 ids, served by GCC 9 at those versions' default standards.
    expect(['gcc-7.4', 'gcc-8.3', 'g++-7.4', 'g++-8.3'].map(idOf)).to.deep.equal([48, 49, 52, 53]);
  });

  it("names each compiler's language as Piston does; no alias names another language", () => {
    const languages = new Set(allCompilers.flatMap((x) => (x.c.piston ? [x.c.piston.language] : [])));
    for (const { id, c } of allCompilers) {
      // Judge0's Multi-file program (its compile and run scripts) is no language of Piston's.
      if (!c.piston && c.judge0?.id === 89) continue;
      if (!c.piston) {
        // Left out of the Piston routes only where another id has its language and version.
        expect(allCompilers.some((o) => o.id !== id && o.c.piston && o.c.language === c.language && o.c.version === c.version), `${id} has no Piston name`).to.equal(true);
        continue;
      }
      expect(c.piston.language, id).to.match(/^[a-z0-9][a-z0-9.+#-]*$/);
      for (const alias of c.piston.aliases) {
        expect(alias, `${id} alias`).to.not.equal('');
        if (alias !== c.piston.language) expect(languages.has(alias), `${id}: alias ${alias} is another compiler's language`).to.equal(false);
      }
    }
  });

  it('has a hello program and a level program, each with its output, and says what the level program proves', () => {
    for (const { id, c } of allCompilers) {
      expect(c.hello.code.trim(), `${id} hello`).to.not.equal('');
      expect(c.hello.output, `${id} hello output`).to.not.equal('');
      expect(c.level.code.trim(), `${id} level`).to.not.equal('');
      expect(c.level.output, `${id} level output`).to.not.equal('');
      expect(c.level.proves.trim(), `${id} proves`).to.not.equal('');
      expect(c.level.code, `${id}: the level program differs from hello`).to.not.equal(c.hello.code);
    }
  });

  it('retires ids only in favour of a successor some recipe serves', () => {
    const ids = new Set(allCompilers.map((x) => x.id));
    for (const { id, c } of allCompilers) if (c.retired) expect(ids.has(c.retired.successor), `${id} successor`).to.equal(true);
  });

  it('ships libraries only with the newest id of a language, never with the ten, each with its package, use and probe', () => {
    const withLibraries = allCompilers.filter((x) => x.c.libraries && !x.c.retired);
    expect(withLibraries.map((x) => x.id).sort()).to.deep.equal(['g++-14', 'nodejs-20', 'openjdk-21', 'python-3.13', 'r-4.2']);
    for (const id of INTERFACE_IDS) expect(allCompilers.find((x) => x.id === id)!.c.libraries, id).to.equal(undefined);
    for (const { id, c } of withLibraries) {
      for (const [name, l] of Object.entries(c.libraries!)) {
        expect(l.probe[0], `${id} ${name} probe`).to.match(/^\//);
        expect(l.version, `${id} ${name}`).to.match(/^\d+\.\d+/);
      }
    }
    const expected = { 'python-3.13': ['numpy', 'scipy', 'pandas', 'matplotlib', 'sympy', 'scikit-learn', 'networkx'], 'g++-14': ['boost', 'fmt'], 'openjdk-21': ['gson', 'guava', 'commons-lang3'], 'r-4.2': ['ggplot2', 'dplyr', 'data.table'], 'nodejs-20': ['lodash'] };
    for (const [id, names] of Object.entries(expected)) expect(Object.keys(allCompilers.find((x) => x.id === id)!.c.libraries!), id).to.include.members(names);
  });

  it("puts every Java library's jar on the class path of both javac and java, after the program's own classes (classes/)", () => {
    const java = allCompilers.find((x) => x.id === 'openjdk-21')!.c;
    const classPath = (argv: string[]) => argv[argv.indexOf('-cp') + 1]!.split(':');
    for (const argv of [java.compile!, java.run]) {
      const cp = classPath(argv);
      expect(cp[0]).to.equal('classes');
      expect(cp).to.include.members(['/usr/share/java/gson.jar', '/usr/share/java/guava.jar', '/usr/share/java/commons-lang3.jar', '/usr/share/java/commons-math3.jar', '/usr/share/java/jackson-databind.jar']);
    }
    expect(classPath(java.compile!)).to.deep.equal(classPath(java.run));
  });

  it('keeps the Piston names and Judge0 ids of the ten', () => {
    const cat = catalogue();
    // C and C++ at 9.3.0 reach gcc-9 and g++-9 (GCC 9 at its own standards, as Piston and Judge0 run it).
    const reached = INTERFACE_IDS.map((id) => ({ 'gcc-4.9': 'gcc-9', 'g++-4.9': 'g++-9' } as Record<string, string>)[id] ?? id);
    expect(INTERFACE_IDS.filter((id, k) => reached[k] !== id).map((id) => cat.entries.get(id)!.piston)).to.deep.equal([undefined, undefined]);
    const names = reached.map((id) => cat.entries.get(id)!.piston!);
    expect(names.map((n) => n.language)).to.deep.equal(['python', 'python', 'c', 'c++', 'java', 'csharp.net', 'fsharp.net', 'php', 'ruby', 'haskell']);
    expect(cat.entries.get('dotnet-csharp-5')!.piston).to.deep.equal({ language: 'csharp.net', aliases: ['csharp', 'c#', 'cs', 'c#.net', 'cs.net'], runtime: 'dotnet' });
    const langs = judge0Languages(reached.map((id) => availabilityOf(cat.entries.get(id)!, '1.0')));
    expect(langs.find((l) => l.id === 54)).to.deep.equal({ id: 54, name: 'C++ (GCC 1.0)' });
    expect(langs.find((l) => l.id === 87)).to.deep.equal({ id: 87, name: 'F# (.NET 1.0)' });
  });
});

/** A recipe served by the python3.9 image's interpreter under a new image name. */
function tinyRecipe(image: string, compilers: Record<string, Partial<ImageRecipe['compilers'][string]>>): ImageRecipe {
  const base = catalogue().entries.get('python-3.9.7')!;
  const full = Object.fromEntries(
    Object.entries(compilers).map(([id, c]) => [
      id,
      {
        language: 'tiny',
        version: '1.0',
        source: 'main.tiny',
        run: base.run,
        probe: base.probe,
        hello: { code: "print('Hello, World!')\n", output: 'Hello, World!\n' },
        level: { code: 'print(1 | 2)\n', output: '3\n', proves: 'bitwise or' },
        piston: { language: 'tiny', aliases: ['tn'] },
        ...c,
      },
    ]),
  );
  return { image, description: 'test', suite: 'bullseye', packages: ['python3.9'], compilers: full as ImageRecipe['compilers'] };
}

const operator = (recipe: ImageRecipe): CatalogueRecipe => ({ recipe, origin: 'operator', file: `/ops/${recipe.image}.json` });
const builtInSet = (): CatalogueRecipe[] => builtIn.map((recipe) => ({ recipe, origin: 'built-in' as const, file: `rootfs/${recipe.image}.json` }));

describe("the operator's recipes beside the built-in ones", () => {
  it('add their compilers after the ten, with their Piston names and Judge0 ids', () => {
    const cat = buildCatalogue(builtInSet(), [operator(tinyRecipe('tiny', { 'tiny-1.0': { judge0: { id: 9001 } } }))]);
    expect(cat.problems).to.deep.equal([]);
    expect([...cat.entries.keys()].slice(0, INTERFACE_IDS.length)).to.deep.equal([...INTERFACE_IDS]);
    expect(cat.entries.get('tiny-1.0')).to.include({ image: 'tiny', language: 'tiny' });
    expect(cat.recipes.at(-1)).to.include({ origin: 'operator' });
  });

  it('are refused, and reported, when they reuse a built-in image name, compiler id or Judge0 id: the built-in wins', () => {
    const cat = buildCatalogue(builtInSet(), [
      operator(tinyRecipe('gcc', { 'tiny-a': {} })),
      operator(tinyRecipe('tiny-b', { 'python-3.9.7': {} })),
      operator(tinyRecipe('tiny-c', { 'tiny-c-1': { judge0: { id: 71 } } })),
      operator(tinyRecipe('tiny-d', { 'tiny-d-1': {} })),
    ]);
    expect(cat.problems.map((p) => p.file)).to.deep.equal(['/ops/gcc.json', '/ops/tiny-b.json', '/ops/tiny-c.json']);
    expect(cat.problems[0]!.problem).to.match(/image gcc is already defined by rootfs\/gcc\.json/);
    expect(cat.problems[1]!.problem).to.match(/compiler python-3\.9\.7 is already served by image python3\.9/);
    expect(cat.problems[2]!.problem).to.match(/Judge0 id 71 of tiny-c-1 is already used by python-3\.9\.7/);
    expect(cat.entries.get('python-3.9.7')!.image).to.equal('python3.9');
    expect(cat.entries.has('tiny-a')).to.equal(false);
    expect(cat.entries.has('tiny-d-1')).to.equal(true);
  });

  it('must not clash among the built-in ones: that is an error, not a report', () => {
    const twice = [...builtInSet(), { ...builtInSet()[0]!, file: 'rootfs/copy.json', recipe: { ...builtIn[0]!, image: 'copy' } }];
    expect(() => buildCatalogue(twice, [])).to.throw(/rootfs\/copy\.json: compiler .* is already served/);
  });

  it('may retire an id in favour of a successor; an unknown successor refuses the recipe', () => {
    const cat = buildCatalogue(builtInSet(), [
      operator(tinyRecipe('tiny-old', { 'tiny-0.9': { retired: { successor: 'python-3.9.7' }, judge0: { id: 9100 } } })),
      operator(tinyRecipe('tiny-bad', { 'tiny-0.8': { retired: { successor: 'nowhere-1' } } })),
    ]);
    expect(cat.problems).to.have.length(1);
    expect(cat.problems[0]!.problem).to.match(/retired in favour of nowhere-1, which no recipe serves/);
    const old = cat.entries.get('tiny-0.9')!;
    // Never available, even with an image that still holds it.
    expect(availabilityOf(old, '0.9')).to.include({ available: false, version: null });
    expect(offeredIds(cat)).to.not.include('tiny-0.9');
  });
});

describe('RUNBOX_RECIPES_DIR', () => {
  let dir: string;
  let images: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'runbox-recipes-'));
    images = mkdtempSync(join(tmpdir(), 'runbox-recipes-images-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(images, { recursive: true, force: true });
  });
  const write = (r: ImageRecipe) => writeFileSync(join(dir, `${r.image}.json`), JSON.stringify(r));

  it('is read beside rootfs/, and re-read when a recipe is added, without a restart', async () => {
    write(tinyRecipe('tiny', { 'tiny-1.0': { judge0: { id: 9001 } } }));
    expect(catalogue(dir).entries.has('tiny-1.0')).to.equal(true);
    expect(catalogue().entries.has('tiny-1.0')).to.equal(false);
    write(tinyRecipe('tiny2', { 'tiny-2.0': { judge0: { id: 9002 } } }));
    // The directory is looked at again after a second.
    await pause(1100);
    expect(catalogue(dir).entries.has('tiny-2.0')).to.equal(true);
    expect(compilerOfLanguage(9002, dir)?.id).to.equal('tiny-2.0');
  });

  it('reports a file that is not a valid recipe and serves the rest', () => {
    writeFileSync(join(dir, 'broken.json'), '{"image": "broken"');
    writeFileSync(join(dir, 'wrongname.json'), JSON.stringify(tinyRecipe('other', { 'tiny-3': {} })));
    const noLevel = tinyRecipe('nolevel', { 'tiny-4': {} }) as unknown as { compilers: Record<string, Record<string, unknown>> };
    delete noLevel.compilers['tiny-4']!['level'];
    writeFileSync(join(dir, 'nolevel.json'), JSON.stringify(noLevel));
    write(tinyRecipe('fine', { 'tiny-5': {} }));
    const cat = catalogue(dir);
    expect(cat.problems.map((p) => p.problem).join('\n')).to.match(/broken\.json: not readable as JSON/).and.match(/wrongname\.json: image name must match/).and.match(/nolevel\.json: invalid recipe at \/compilers\/tiny-4/);
    expect(cat.entries.has('tiny-5')).to.equal(true);
    expect(cat.entries.has('python-3.9.7')).to.equal(true);
  });

  it('refuses a link that is not an absolute path of plain components, or whose target is not one', () => {
    const withLinks = (image: string, links: unknown) => writeFileSync(join(dir, `${image}.json`), JSON.stringify({ ...tinyRecipe(image, { [`${image}-1`]: {} }), links }));
    withLinks('relativelink', { 'usr/local/bin/x': '/usr/bin/true' });
    withLinks('climbinglink', { '/usr/local/../../etc/x': '/usr/bin/true' });
    withLinks('relativetarget', { '/usr/local/bin/x': '../bin/true' });
    withLinks('goodlinks', { '/usr/local/gcc-9.2.0/bin/g++': '/usr/bin/g++', '/usr/local/openjdk13': '/usr/lib/jvm/java-17-openjdk-amd64' });
    const problems = catalogue(dir).problems.map((p) => p.problem).join('\n');
    expect(problems).to.match(/relativelink\.json: link "usr\/local\/bin\/x" must be an absolute path/);
    expect(problems).to.match(/climbinglink\.json: link "\/usr\/local\/\.\.\/\.\.\/etc\/x" must be an absolute path/);
    expect(problems).to.match(/relativetarget\.json: invalid recipe at \/links/);
    expect(problems).to.not.match(/goodlinks/);
    expect(catalogue(dir).entries.has('goodlinks-1')).to.equal(true);
  });

  it('refuses a library whose name is not plain, or that lacks its package or probe', () => {
    const lib = { package: 'python3-numpy', version: '1.0', use: 'import numpy', probe: ['/usr/bin/python3', '-c', 'import numpy'] };
    const withLibraries = (image: string, libraries: unknown) => {
      const r = tinyRecipe(image, { [`${image}-1`]: {} }) as unknown as { compilers: Record<string, Record<string, unknown>> };
      r.compilers[`${image}-1`]!['libraries'] = libraries;
      writeFileSync(join(dir, `${image}.json`), JSON.stringify(r));
    };
    withLibraries('badname', { '../numpy': lib });
    withLibraries('nopackage', { numpy: { ...lib, package: undefined } });
    withLibraries('noprobe', { numpy: { ...lib, probe: [] } });
    withLibraries('good', { numpy: lib, 'scikit-learn': lib, 'data.table': lib });
    const cat = catalogue(dir);
    const problems = cat.problems.map((p) => p.problem).join('\n');
    expect(problems).to.match(/badname\.json: library name "\.\.\/numpy" of badname-1 must match/);
    expect(problems).to.match(/nopackage\.json: invalid recipe at \/compilers\/nopackage-1\/libraries\/numpy/);
    expect(problems).to.match(/noprobe\.json: invalid recipe at \/compilers\/noprobe-1\/libraries\/numpy\/probe/);
    expect(Object.keys(cat.entries.get('good-1')!.libraries!)).to.deep.equal(['numpy', 'scikit-learn', 'data.table']);
    // Installed: the libraries are what the image's manifest records, not what the recipe states.
    mkdirSync(join(images, 'good', 'rootfs'), { recursive: true });
    const compilers = { 'good-1': { version: '1.0', libraries: { numpy: '1.0.1', 'scikit-learn': '1.2' } } };
    writeFileSync(join(images, 'good', 'manifest.json'), JSON.stringify({ image: 'good', suite: 'bullseye', recipeHash: 'x', digest: 'y', builtAt: 'now', compilers }));
    const good = compilerAvailability(images, dir).find((c) => c.id === 'good-1')!;
    expect(good).to.deep.include({ available: true, libraries: { numpy: '1.0.1', 'scikit-learn': '1.2' } });
    expect(compilerAvailability(images, dir).find((c) => c.id === 'python-3.9.7')).to.deep.include({ available: false, libraries: {} });
  });

  it("refuses a syntax check beside a compile stage, and a shebang pattern that is not a regular expression; takes the languages' extensions", () => {
    write(tinyRecipe('both', { 'both-1': { compile: ['/usr/bin/true'], check: ['/usr/bin/true'] } }));
    write(tinyRecipe('badshebang', { 'badshebang-1': { shebang: { extensions: ['.tiny'], pattern: '^#!(' } } }));
    write(tinyRecipe('badext', { 'badext-1': { extensions: ['tiny'] } }));
    write(tinyRecipe('tidy', { 'tidy-1': { check: ['/usr/bin/tiny', '-n', '{file}'], extensions: ['.tiny', '.tn'], dialects: { kattis: ['.t'] } } }));
    const cat = catalogue(dir);
    const problems = cat.problems.map((p) => p.problem).join('\n');
    expect(problems).to.match(/both\.json: both-1 has a compile stage, so no check/);
    expect(problems).to.match(/badshebang\.json: the shebang pattern of badshebang-1 is not a regular expression/);
    expect(problems).to.match(/badext\.json: invalid recipe at \/compilers\/badext-1\/extensions\/0/);
    expect(cat.entries.get('tidy-1')).to.deep.include({ check: ['/usr/bin/tiny', '-n', '{file}'], extensions: ['.tiny', '.tn'] });
  });

  it('a directory that cannot be read leaves the built-in catalogue, reported', () => {
    const cat = catalogue(join(dir, 'absent'));
    expect(cat.problems[0]!.problem).to.match(/cannot read the recipes directory/);
    expect([...cat.entries.keys()]).to.deep.equal([...catalogue().entries.keys()]);
  });

  it('its compilers are available once their image is installed, and Piston and Judge0 find them', () => {
    write(tinyRecipe('tiny', { 'tiny-1.0': { judge0: { id: 9001, name: 'Tiny ({version})' } } }));
    expect(compilerAvailability(images, dir).find((c) => c.id === 'tiny-1.0')).to.include({ available: false });
    mkdirSync(join(images, 'tiny', 'rootfs'), { recursive: true });
    writeFileSync(join(images, 'tiny', 'manifest.json'), JSON.stringify({ image: 'tiny', compilers: { 'tiny-1.0': { version: '1.0.3' } } }));
    const list = compilerAvailability(images, dir);
    expect(list.find((c) => c.id === 'tiny-1.0')).to.include({ available: true, version: '1.0.3' });
    expect(findRuntime(pistonRuntimes(list), 'tn', '*')).to.include({ compiler: 'tiny-1.0', language: 'tiny', version: '1.0.3' });
    expect(judge0Languages(list)).to.deep.include({ id: 9001, name: 'Tiny (1.0.3)' });
  });

  it('image build --missing picks every image not installed, leaving out wholly retired ones', () => {
    write(tinyRecipe('tiny', { 'tiny-1.0': {} }));
    write(tinyRecipe('tiny-old', { 'tiny-0.9': { retired: { successor: 'tiny-1.0' } } }));
    mkdirSync(join(images, 'tiny', 'rootfs'), { recursive: true });
    writeFileSync(join(images, 'tiny', 'manifest.json'), JSON.stringify({ image: 'tiny', compilers: { 'tiny-1.0': { version: '1.0' } } }));
    const missing = selectRecipes([], { missing: { imagesDir: images }, recipesDir: dir }).map((r) => r.image);
    expect(missing).to.include.members(builtIn.map((r) => r.image));
    expect(missing).to.not.include('tiny');
    expect(missing).to.not.include('tiny-old');
    expect(() => selectRecipes(['tiny-0.9'], { recipesDir: dir })).to.throw(/tiny-0\.9 is retired; build tiny-1\.0 instead/);
  });

  it('a retired id is refused with 400 compiler_unavailable naming its successor; an unknown one with invalid_request', () => {
    write(tinyRecipe('tiny', { 'tiny-1.0': {} }));
    write(tinyRecipe('tiny-old', { 'tiny-0.9': { retired: { successor: 'tiny-1.0' } } }));
    const refusal = (compiler: unknown): ApiError => {
      try {
        assertRunnable(compiler, dir);
      } catch (err) {
        return err as ApiError;
      }
      throw new Error('not refused');
    };
    expect(refusal('tiny-0.9')).to.include({ status: 400, code: 'compiler_unavailable' });
    expect(refusal('tiny-0.9').message).to.equal('compiler tiny-0.9 is retired; use tiny-1.0 instead (see GET /api/compilers/)');
    expect(refusal('tiny-7')).to.include({ status: 400, code: 'invalid_request' });
    expect(refusal('tiny-7').message).to.match(/^compiler must be one of: python-3\.9\.7, python-2\.7\.18, .*tiny-1\.0/);
    expect(refusal('tiny-7').message).to.not.include('tiny-0.9');
    expect(refusal(7)).to.include({ code: 'invalid_request' });
    expect(() => assertRunnable('tiny-1.0', dir)).to.not.throw();
  });
});
