#!/usr/bin/env node
// Bundles each browser entry (src/browser/<name>/main.ts) into dist/browser/<name>.js
// after type-checking the folder with its own tsconfig (DOM library). Server code never
// imports these files; the API serves the bundles as static assets.
//
// The code editor (src/browser/editor) is built first and apart: split into chunks
// (CodeMirror's core, then one chunk per language, fetched when a file of that language
// is first opened) under dist/browser/editor/, every name carrying a hash of its content,
// so it can be served as immutable. The playground and the widget fetch it only when
// they need it, by the path given to them here as __RUNBOX_EDITOR__. The files of
// earlier builds stay a while (src/util/superseded-assets.ts): a page holding an
// earlier /widget/v1.js fetches the editor that loader names.
import { existsSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'src/browser');
const out = join(root, 'dist/browser');
const EDITOR = 'editor';
/** Where the API serves dist/browser/editor/ (src/api/middleware/browser-assets.ts). */
const EDITOR_PATH = '/widget/editor/';
const entries = readdirSync(src, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(src, d.name, 'main.ts')))
  .map((d) => d.name);

const common = { bundle: true, format: 'esm', target: 'es2022', minify: true, legalComments: 'none', logLevel: 'warning' };

if (entries.length > 0) {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(src, 'tsconfig.json')], { stdio: 'inherit' });
  let editorPath = '';
  if (entries.includes(EDITOR)) {
    // Each compiler id's source file name (its language, for highlighting code given
    // without a file name), from the catalogue tsc has just built; none without it.
    const sources = {};
    const catalogueJs = join(root, 'dist/src/compilers/catalogue.js');
    if (existsSync(catalogueJs)) {
      const { catalogue } = await import(catalogueJs);
      for (const entry of catalogue().entries.values()) if (!entry.retired) sources[entry.id] = entry.source;
    }
    const { metafile } = await build({
      ...common,
      entryPoints: [join(src, EDITOR, 'main.ts')],
      outdir: join(out, EDITOR),
      splitting: true,
      entryNames: 'editor-[hash]',
      chunkNames: 'chunk-[hash]',
      metafile: true,
      define: { __RUNBOX_SOURCES__: JSON.stringify(sources) },
    });
    // Each language a dynamic import is an entry point of its own too: the editor's is the one named so.
    const entry = Object.keys(metafile.outputs).find((file) => basename(file).startsWith('editor-') && file.endsWith('.js'));
    editorPath = `${EDITOR_PATH}${basename(entry)}`;
    // tsc has built the module; the files this build no longer names are kept a while, then go.
    const { keepSuperseded } = await import(join(root, 'dist/src/util/superseded-assets.js'));
    keepSuperseded(join(out, EDITOR), { current: new Set(Object.keys(metafile.outputs).map((file) => basename(file))) });
  }
  await Promise.all(
    entries
      .filter((name) => name !== EDITOR)
      .map((name) =>
        build({
          ...common,
          entryPoints: [join(src, name, 'main.ts')],
          outfile: join(out, `${name}.js`),
          sourcemap: true,
          define: { __RUNBOX_EDITOR__: JSON.stringify(editorPath) },
        }),
      ),
  );
}
