import { expect } from 'chai';
import piston from 'piston-client';
import { readManifest } from '../../src/compilers/availability.js';
import { compilerEntry } from '../../src/compilers/catalogue.js';
import { loadConfig } from '../../src/config.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// Languages beyond the contract's ten through the compat routes, end to end: each
// compiler's level program by Piston's language name (the npm piston-client) and by its
// Judge0 CE language id. A language whose image is not installed is pending.

const IDS = [
  // C and C++ as Judge0 (50, 54) and Piston (c, c++ 9.3.0) run them: GCC 9's own standards.
  'gcc-9',
  'g++-9',
  'nodejs-18',
  'typescript-4.8',
  'go-1.19',
  'rust-1.63',
  'bash-5.2',
  'sqlite3-3.40',
  'lua-5.4',
  'perl-5.36',
  'erlang-25',
  'swipl-9.0',
  'dotnet-vb-10',
  'nasm-2.16',
  'swift-6.0',
];

interface PistonRun {
  language: string;
  version: string;
  run: { stdout: string; code: number | null };
  compile?: { code: number | null };
}

describe('new languages through the Piston and Judge0 routes', function () {
  let s: ResultsStack;
  let key: string;
  const imagesDir = loadConfig().RUNBOX_IMAGES_DIR;

  before(async function () {
    const why = realRunsUnavailable([]);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('languages', { RUNBOX_RUNNER_SLOTS: '2', ...(uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {}) });
    await s.startRunner();
    ({ key: { key } } = await keyFor(s.db));
  });
  after(async () => s?.close());

  for (const id of IDS) {
    const entry = compilerEntry(id);
    /** The installed version, or why the language is pending. */
    const installed = (ctx: Mocha.Context): string => {
      const version = entry && readManifest(imagesDir, entry.image)?.compilers[id]?.version;
      if (!version) {
        console.log(`      SKIPPED: ${entry ? `image ${entry.image} not installed (runbox-admin image build ${entry.image})` : `no recipe serves ${id}`}`);
        ctx.skip();
      }
      return version!;
    };

    // By the version installed: with no version Piston's clients get the highest, which
    // for javascript and rust is a trixie identifier's.
    it(`${id}: Piston execute('${entry?.piston?.language ?? id}') runs the level program`, async function () {
      const version = installed(this);
      const got = (await piston({ server: `${s.url}/piston/${key}` }).execute(entry!.piston!.language, entry!.level.code, { args: [], version })) as PistonRun;
      expect(got.language).to.equal(entry!.piston!.language);
      expect(got.version).to.equal(version);
      expect(got.run, JSON.stringify(got)).to.include({ stdout: entry!.level.output, code: 0 });
      if (entry!.compile) expect(got.compile).to.include({ code: 0 });
      else expect(got.compile).to.equal(undefined);
    });

    it(`${id}: Judge0 submission with language_id ${entry?.judge0?.id ?? '?'} is Accepted`, async function () {
      installed(this);
      const res = await fetch(`${s.url}/judge0/submissions?base64_encoded=false&wait=true`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Auth-Token': key },
        body: JSON.stringify({ source_code: entry!.level.code, language_id: entry!.judge0!.id, expected_output: entry!.level.output }),
      });
      expect(res.status).to.equal(201);
      const sub = (await res.json()) as { stdout: string; status: { id: number; description: string } };
      expect(sub.status, JSON.stringify(sub)).to.deep.equal({ id: 3, description: 'Accepted' });
      expect(sub.stdout).to.equal(entry!.level.output);
    });
  }

  it('GET /judge0/languages lists the installed new languages under their Judge0 ids and names', async function () {
    const res = await fetch(`${s.url}/judge0/languages`);
    expect(res.status).to.equal(200);
    const got = (await res.json()) as { id: number; name: string }[];
    const installedIds = IDS.filter((id) => {
      const e = compilerEntry(id);
      return e && readManifest(imagesDir, e.image)?.compilers[id];
    });
    if (!installedIds.length) {
      console.log('      SKIPPED: none of the images is installed');
      this.skip();
    }
    for (const id of installedIds) {
      const e = compilerEntry(id)!;
      const version = readManifest(imagesDir, e.image)!.compilers[id]!.version;
      expect(got, id).to.deep.include({ id: e.judge0!.id, name: e.judge0!.name!.replace('{version}', version) });
    }
  });
});
