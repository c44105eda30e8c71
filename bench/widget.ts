import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { distBrowserDir } from '../src/util/paths.js';
import { row, runIfMain, writeResult, type BenchOutcome } from './common.js';

// The embeddable widget's size as a page downloads it: dist/browser/widget.js (what
// /widget/v1.js serves, built by `npm run build`), gzipped at the level the API uses,
// against the minified file itself as the baseline.

const TARGET_GZIP_KB = 50;

export async function benchWidget(): Promise<BenchOutcome> {
  const file = join(distBrowserDir(), 'widget.js');
  const body = readFileSync(file);
  const gzipped = gzipSync(body, { level: 9 }).length;
  const result = { file, minifiedBytes: body.length, gzipBytes: gzipped, targetGzipKB: TARGET_GZIP_KB };
  writeResult('widget', result);
  return {
    result,
    rows: [
      row({
        benchmark: 'widget',
        figure: '/widget/v1.js gzipped',
        unit: 'KB',
        value: gzipped / 1024,
        baseline: body.length / 1024,
        baselineIs: 'minified, not compressed',
        target: `< ${TARGET_GZIP_KB} KB`,
        met: gzipped / 1024 < TARGET_GZIP_KB,
      }),
    ],
  };
}

runIfMain(import.meta.url, benchWidget);
