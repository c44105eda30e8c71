#!/usr/bin/env node
// Bundles each browser entry (src/browser/<name>/main.ts) into dist/browser/<name>.js
// after type-checking the folder with its own tsconfig (DOM library). Server code never
// imports these files; the API serves the bundles as static assets.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const src = join(root, 'src/browser');
const entries = readdirSync(src, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(src, d.name, 'main.ts')))
  .map((d) => d.name);

if (entries.length > 0) {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(src, 'tsconfig.json')], { stdio: 'inherit' });
  await Promise.all(
    entries.map((name) =>
      build({
        entryPoints: [join(src, name, 'main.ts')],
        outfile: join(root, 'dist/browser', `${name}.js`),
        bundle: true,
        format: 'esm',
        target: 'es2022',
        minify: true,
        sourcemap: true,
        legalComments: 'none',
        logLevel: 'warning',
      }),
    ),
  );
}
