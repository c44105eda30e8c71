import { expect } from 'chai';
import { execa } from 'execa';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as pause } from 'node:timers/promises';
import { imageRootfs } from '../../src/compilers/availability.js';
import type { ImageRecipe } from '../../src/compilers/recipe.js';
import { loadConfig } from '../../src/config.js';
import { writeManifest } from '../../src/images/manifest.js';
import { probeVersion } from '../../src/images/probe.js';
import { recipeHash } from '../../src/images/recipes.js';
import { treeDigest } from '../../src/images/tree.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { keyFor, postJson, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// An operator adds a language without touching code: a recipe dropped into the
// recipes directory (RUNBOX_RECIPES_DIR) of a running API and runner, then its image
// installed. The language is Debian's dash (/bin/sh), which the python3.9 image ships,
// under an id of its own; it runs through the native API, Piston and Judge0.

const DASH: ImageRecipe = {
  image: 'dash',
  description: "Debian bullseye's dash, the POSIX shell",
  suite: 'bullseye',
  packages: ['dash'],
  compilers: {
    'dash-0.5': {
      language: 'dash',
      version: '0.5.11',
      source: 'main.sh',
      run: ['/bin/sh', 'main.sh'],
      probe: ['/usr/bin/dpkg-query', '-W', '-f', '${Version}\n', 'dash'],
      hello: { code: "echo 'Hello, World!'\n", output: 'Hello, World!\n' },
      level: { code: 'x=$((6 * 7))\nprintf "%s\\n" "$x"\n', output: '42\n', proves: 'POSIX arithmetic expansion' },
      piston: { language: 'dash', aliases: ['posix-sh'] },
      judge0: { id: 1001, name: 'Dash ({version})' },
    },
  },
};

/** A retired id of another recipe, pointing at dash-0.5. */
const DASH_OLD: ImageRecipe = {
  ...DASH,
  image: 'dash-old',
  compilers: { 'dash-0.4': { ...DASH.compilers['dash-0.5']!, version: '0.4', judge0: { id: 1000 }, retired: { successor: 'dash-0.5' } } },
};

interface Listed {
  id: string;
  language: string;
  version: string | null;
  available: boolean;
  piston: string;
  judge0: number | null;
}

describe('a language added by a recipe in RUNBOX_RECIPES_DIR', function () {
  let s: ResultsStack;
  let key: string;
  let recipes: string;
  let images: string;
  const listed = async (): Promise<Listed[]> => (await (await fetch(`${s.url}/api/compilers/`)).json()) as Listed[];
  /** Polls the compiler list (the API re-reads the directory, the runner publishes at its heart-beat). */
  const until = async (what: string, ok: (list: Listed[]) => boolean): Promise<Listed[]> => {
    for (let i = 0; i < 100; i++) {
      const list = await listed();
      if (ok(list)) return list;
      await pause(200);
    }
    throw new Error(`GET /api/compilers/ never showed ${what}`);
  };
  const runSync = (body: object) => postJson(`${s.url}/api/v2/run-code-sync/`, key, body);

  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    recipes = mkdtempSync(join(tmpdir(), 'runbox-recipes-'));
    images = mkdtempSync(join(tmpdir(), 'runbox-images-'));
    chmodSync(images, 0o755);
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('catalogue', {
      RUNBOX_RECIPES_DIR: recipes,
      RUNBOX_IMAGES_DIR: images,
      // Heart-beats every 1.7 s: the runner publishes a new image soon.
      RUNBOX_LEASE_SECONDS: '5',
      ...(uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {}),
    });
    await s.startRunner();
    ({
      key: { key },
    } = await keyFor(s.db));
  });
  after(async () => {
    await s?.close();
    if (recipes) rmSync(recipes, { recursive: true, force: true });
    if (images) rmSync(images, { recursive: true, force: true });
  });

  it('is unknown before its recipe exists', async () => {
    expect((await listed()).map((c) => c.id)).to.not.include('dash-0.5');
    const res = await runSync({ code: 'echo hi', compiler: 'dash-0.5' });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('invalid_request');
  });

  it('is listed, not available, once the recipe is dropped in; runs answer 400 compiler_unavailable', async () => {
    writeFileSync(join(recipes, 'dash.json'), JSON.stringify(DASH, null, 2));
    const list = await until('dash-0.5', (l) => l.some((c) => c.id === 'dash-0.5'));
    expect(list.find((c) => c.id === 'dash-0.5')).to.deep.equal({
      id: 'dash-0.5', language: 'dash', version: null, available: false, piston: 'dash', judge0: 1001, compiler_options: [], libraries: {},
    });
    // The ten stay first, as they were.
    expect(list.slice(0, 2).map((c) => c.id)).to.deep.equal(['python-3.9.7', 'python-2.7.18']);
    const res = await runSync({ code: 'echo hi', compiler: 'dash-0.5' });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('compiler_unavailable');
  });

  it('runbox-admin image catalogue lists it, not built, with its language', async () => {
    const r = await execa('node', [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), 'image', 'catalogue'], {
      env: { RUNBOX_RECIPES_DIR: recipes, RUNBOX_IMAGES_DIR: images },
    });
    const out = JSON.parse(r.stdout) as { images: { image: string; origin: string; state: string; compilers: { id: string; language: string; piston: string; judge0: number | null }[] }[]; problems: unknown[] };
    const dash = out.images.find((i) => i.image === 'dash')!;
    expect(dash).to.include({ origin: 'operator', state: 'not built' });
    expect(dash.compilers).to.deep.equal([{ id: 'dash-0.5', language: 'dash', version: '0.5.11', installed: null, piston: 'dash', judge0: 1001 }]);
    expect(out.images.find((i) => i.image === 'gcc')).to.include({ origin: 'built-in' });
    expect(out.problems).to.deep.equal([]);
  });

  it('becomes available when its image is installed, with the version its probe reads', async function () {
    this.timeout(120_000);
    // Stands in for `runbox-admin image build dash`, which would bootstrap the same Debian
    // package: the python3.9 image's tree (which holds dash), hard-linked, then probed
    // and described by a manifest as the build does it.
    const staging = join(images, 'dash');
    mkdirSync(staging);
    await execa('cp', ['-al', imageRootfs(loadConfig().RUNBOX_IMAGES_DIR, 'python3.9'), join(staging, 'rootfs')]);
    const rootfs = join(staging, 'rootfs');
    const { version } = await probeVersion(rootfs, DASH.compilers['dash-0.5']!);
    expect(version).to.equal('0.5.11');
    await writeManifest(staging, {
      image: 'dash',
      suite: DASH.suite,
      recipeHash: recipeHash(DASH),
      digest: await treeDigest(rootfs),
      builtAt: new Date().toISOString(),
      compilers: { 'dash-0.5': { version } },
    });
    const list = await until('dash-0.5 available', (l) => l.some((c) => c.id === 'dash-0.5' && c.available));
    expect(list.find((c) => c.id === 'dash-0.5')).to.include({ version: '0.5.11', available: true });
  });

  it('runs its hello and level programs through the native API', async () => {
    const hello = (await (await runSync({ code: DASH.compilers['dash-0.5']!.hello.code, compiler: 'dash-0.5' })).json()) as { status: string; output: string };
    expect(hello).to.include({ status: 'success', output: 'Hello, World!\n' });
    const level = (await (await runSync({ code: DASH.compilers['dash-0.5']!.level.code, compiler: 'dash-0.5' })).json()) as { status: string; output: string };
    expect(level).to.include({ status: 'success', output: '42\n' });
  });

  it("runs through Piston's execute by its Piston name and alias, listed in runtimes", async () => {
    const runtimes = (await (await fetch(`${s.url}/piston/api/v2/runtimes`)).json()) as { language: string; version: string; aliases: string[] }[];
    expect(runtimes).to.deep.include({ language: 'dash', version: '0.5.11', aliases: ['posix-sh'] });
    for (const language of ['dash', 'posix-sh']) {
      const res = await postJson(`${s.url}/piston/api/v2/execute`, key, { language, version: '*', files: [{ content: 'read x\necho "got $x"\n' }], stdin: 'it\n' });
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { language: string; version: string; run: { stdout: string; code: number } };
      expect(body).to.include({ language: 'dash', version: '0.5.11' });
      expect(body.run).to.include({ stdout: 'got it\n', code: 0 });
    }
  });

  it("runs through Judge0's submissions by its Judge0 id, listed in languages", async () => {
    const languages = (await (await fetch(`${s.url}/judge0/languages`)).json()) as { id: number; name: string }[];
    expect(languages).to.deep.include({ id: 1001, name: 'Dash (0.5.11)' });
    const res = await fetch(`${s.url}/judge0/submissions?wait=true&fields=stdout,status,language`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key },
      body: JSON.stringify({ source_code: DASH.compilers['dash-0.5']!.level.code, language_id: 1001 }),
    });
    expect(res.status).to.equal(201);
    const body = (await res.json()) as { stdout: string; status: { id: number }; language: { id: number; name: string } };
    expect(body.stdout).to.equal('42\n');
    expect(body.status.id).to.equal(3);
    expect(body.language).to.deep.equal({ id: 1001, name: 'Dash (0.5.11)' });
  });

  it('is in the OpenAPI enum of the compiler field', async () => {
    const doc = (await (await fetch(`${s.url}/api/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, { enum: string[] }> } }> } }>>;
    };
    const compiler = doc.paths['/api/v2/run-code/']!['post']!.requestBody.content['application/json']!.schema.properties['compiler']!;
    expect(compiler.enum).to.include('dash-0.5');
    expect(compiler.enum.slice(0, 10)).to.include('haskell-9.2.7');
  });

  it('a retired id answers 400 compiler_unavailable naming its successor, natively and through Judge0', async () => {
    writeFileSync(join(recipes, 'dash-old.json'), JSON.stringify(DASH_OLD));
    await until('dash-0.4', (l) => l.some((c) => c.id === 'dash-0.4'));
    const res = await runSync({ code: 'echo hi', compiler: 'dash-0.4' });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: unknown }).error).to.deep.equal({
      code: 'compiler_unavailable',
      message: 'compiler dash-0.4 is retired; use dash-0.5 instead (see GET /api/compilers/)',
    });
    const j = await fetch(`${s.url}/judge0/submissions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key },
      body: JSON.stringify({ source_code: 'echo hi', language_id: 1000 }),
    });
    expect(j.status).to.equal(422);
    expect(((await j.json()) as { language_id: string[] }).language_id[0]).to.match(/retired.*use dash-0\.5/);
  });

  it('leaves the list when its recipe is removed', async () => {
    unlinkSync(join(recipes, 'dash-old.json'));
    unlinkSync(join(recipes, 'dash.json'));
    await until('no dash', (l) => !l.some((c) => c.id.startsWith('dash-')));
  });
});
