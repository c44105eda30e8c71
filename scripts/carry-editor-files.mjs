#!/usr/bin/env node
// scripts/carry-editor-files.mjs NEW EARLIER: used by scripts/install. NEW is the code
// editor's directory of the release being installed, EARLIER the one served until now:
// the files EARLIER has and NEW lacks are carried over and kept a while (a page may hold
// the earlier /widget/v1.js, which names them), those kept long enough go
// (src/util/superseded-assets.ts; needs `npm run build`).
import { join } from 'node:path';

const [dir, earlier] = process.argv.slice(2);
if (!dir || !earlier) {
  console.error('usage: carry-editor-files.mjs NEW_EDITOR_DIR EARLIER_EDITOR_DIR');
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
const { currentFiles, keepSuperseded } = await import(join(root, 'dist/src/util/superseded-assets.js'));
keepSuperseded(dir, { current: currentFiles(dir), earlier });
