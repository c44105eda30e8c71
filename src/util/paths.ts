import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The checkout (or /opt/runbox) that holds package.json, found from this file so that
// both `src/` under a test runner and `dist/src/` resolve to the same root.
function findRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'rootfs'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('runbox: cannot find the project root above ' + import.meta.url);
    dir = parent;
  }
}

export const PROJECT_ROOT = findRoot();
export const RECIPES_DIR = join(PROJECT_ROOT, 'rootfs');
export const NATIVE_BUILD_DIR = join(PROJECT_ROOT, 'native', 'build');
/** Browser bundles built by `npm run build` (scripts/build-browser.mjs). */
export const distBrowserDir = (): string => join(PROJECT_ROOT, 'dist', 'browser');
