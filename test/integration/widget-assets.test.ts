import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import Koa from 'koa';
import { browserAssets } from '../../src/api/middleware/browser-assets.js';
import { currentFiles, keepSuperseded, LOADER_MAX_AGE_SECONDS, SUPERSEDED_KEEP_SECONDS, SUPERSEDED_MANIFEST } from '../../src/util/superseded-assets.js';

// A page holding the widget loader of an earlier release (cached for the loader's
// max-age) asks for the editor files that loader names. Two builds of the assets in a
// row (the files as esbuild names them, by their content's hash), then an install over
// an earlier one: the earlier build's files are still served, as immutable, for at
// least as long as a browser may keep the loader that names them; afterwards they go.

const HOUR_MS = 3_600_000;

describe('the editor files an earlier widget loader names', function () {
  let dir: string;
  const built: string[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'runbox-assets-'));
    built.push(dir);
  });
  after(() => {
    for (const d of built) rmSync(d, { recursive: true, force: true });
  });

  /** One build's output: the loader naming its editor entry, and the editor's files. */
  function build(into: string, tag: string, now: number, earlier?: string): string[] {
    const files = [`editor-${tag}AAAA1.js`, `chunk-${tag}BBBB2.js`];
    mkdirSync(join(into, 'editor'), { recursive: true });
    writeFileSync(join(into, 'widget.js'), `import("/widget/editor/${files[0]}"); // ${tag}\n`);
    for (const f of files) writeFileSync(join(into, 'editor', f), `export const build = ${JSON.stringify(tag)};\n`);
    keepSuperseded(join(into, 'editor'), { current: new Set(files), now, ...(earlier ? { earlier } : {}) });
    return files;
  }

  /** GET of each path through the asset middleware on a real HTTP server reading `from`. */
  async function serve(from: string, paths: string[]): Promise<{ status: number; cache: string | null; body: string }[]> {
    const app = new Koa();
    app.use(browserAssets(from));
    app.use((ctx) => {
      ctx.status = 404;
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      return await Promise.all(
        paths.map(async (p) => {
          const res = await fetch(base + p);
          return { status: res.status, cache: res.headers.get('cache-control'), body: await res.text() };
        }),
      );
    } finally {
      server.close();
    }
  }

  it('keeps the files of the build before in the served directory, immutable, past the loader’s cache time; then they go', async () => {
    expect(SUPERSEDED_KEEP_SECONDS, 'kept at least as long as a browser keeps the loader').to.be.at.least(LOADER_MAX_AGE_SECONDS);
    const t0 = Date.UTC(2026, 11, 1, 12);
    const first = build(dir, 'OLD', t0);
    // The next build, a release later, names other files.
    const t1 = t0 + 24 * HOUR_MS;
    const second = build(dir, 'NEW', t1);
    const manifest = JSON.parse(readFileSync(join(dir, 'editor', SUPERSEDED_MANIFEST), 'utf8')) as Record<string, string>;
    expect(manifest).to.deep.equal(Object.fromEntries(first.map((f) => [f, new Date(t1).toISOString()])));

    const [loader, ...files] = await serve(dir, ['/widget/v1.js', ...[...first, ...second].map((f) => `/widget/editor/${f}`)]);
    expect(loader).to.include({ status: 200, cache: `public, max-age=${LOADER_MAX_AGE_SECONDS}` });
    expect(loader!.body).to.include(second[0]);
    for (const f of files) expect(f).to.include({ status: 200, cache: 'public, max-age=31536000, immutable' });
    expect(files[0]!.body).to.include('"OLD"');

    // A build when the loader fetched just before t1 has run out in every cache: still there.
    const third = build(dir, 'NEW', t1 + LOADER_MAX_AGE_SECONDS * 1000 + HOUR_MS);
    expect(third).to.deep.equal(second);
    for (const f of first) expect(existsSync(join(dir, 'editor', f)), f).to.equal(true);
    const stillOld = await serve(dir, first.map((f) => `/widget/editor/${f}`));
    expect(stillOld.map((r) => r.status)).to.deep.equal([200, 200]);

    // Past the keeping time, the next build sweeps them; the current build's files stay.
    build(dir, 'NEW', t1 + SUPERSEDED_KEEP_SECONDS * 1000 + HOUR_MS);
    const after = await serve(dir, [...first, ...second].map((f) => `/widget/editor/${f}`));
    expect(after.map((r) => r.status)).to.deep.equal([404, 404, 200, 200]);
    expect(JSON.parse(readFileSync(join(dir, 'editor', SUPERSEDED_MANIFEST), 'utf8'))).to.deep.equal({});
  });

  it('an install over an earlier one carries the files it served, keeping when they were superseded', async () => {
    const t0 = Date.UTC(2026, 11, 1, 12);
    // Served until now: two releases ago (superseded at t0 + 1 day), and the last release.
    const installed = dir;
    const older = build(installed, 'ONE', t0);
    const t1 = t0 + 24 * HOUR_MS;
    const last = build(installed, 'TWO', t1);
    // The release being installed, built elsewhere (its own directory knows nothing of those).
    const fresh = mkdtempSync(join(tmpdir(), 'runbox-assets-new-'));
    built.push(fresh);
    const t2 = t1 + 48 * HOUR_MS;
    const next = build(fresh, 'THREE', t2);
    keepSuperseded(join(fresh, 'editor'), { current: currentFiles(join(fresh, 'editor')), earlier: join(installed, 'editor'), now: t2 });
    const manifest = JSON.parse(readFileSync(join(fresh, 'editor', SUPERSEDED_MANIFEST), 'utf8')) as Record<string, string>;
    expect(manifest).to.deep.equal({
      ...Object.fromEntries(older.map((f) => [f, new Date(t1).toISOString()])),
      ...Object.fromEntries(last.map((f) => [f, new Date(t2).toISOString()])),
    });
    const served = await serve(fresh, [...older, ...last, ...next].map((f) => `/widget/editor/${f}`));
    expect(served.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 200]);
    expect(currentFiles(join(fresh, 'editor'))).to.deep.equal(new Set(next));
  });
});
