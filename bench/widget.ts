import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { distBrowserDir } from '../src/util/paths.js';
import { row, runIfMain, writeResult, type BenchOutcome } from './common.js';

// The embeddable widget's size as a page downloads it: dist/browser/widget.js (what
// /widget/v1.js serves, built by `npm run build`), gzipped at the level the API uses,
// against the minified file itself as the baseline. And the code editor it fetches with
// its `editor` attribute (dist/browser/editor/): its entry with the chunks that entry
// imports (what comes before any language), then the largest language chunk on top.

const TARGET_GZIP_KB = 50;

const gz = (b: Buffer) => gzipSync(b, { level: 9 }).length;

/** The editor's entry and every chunk it imports statically, and each language chunk (imported dynamically). */
function editorFiles(): { core: Buffer[]; languages: Buffer[] } | null {
  const dir = join(distBrowserDir(), 'editor');
  if (!existsSync(dir)) return null;
  const names = readdirSync(dir);
  const entry = names.find((n) => n.startsWith('editor-'));
  if (!entry) return null;
  const core = new Set<string>();
  const visit = (name: string) => {
    if (core.has(name)) return;
    core.add(name);
    const text = readFileSync(join(dir, name), 'utf8');
    for (const m of text.matchAll(/(?:from|import)\s*"\.\/(chunk-[A-Za-z0-9_-]+\.js)"/g)) visit(m[1]!);
  };
  visit(entry);
  return { core: [...core].map((n) => readFileSync(join(dir, n))), languages: names.filter((n) => !core.has(n)).map((n) => readFileSync(join(dir, n))) };
}

export async function benchWidget(): Promise<BenchOutcome> {
  const file = join(distBrowserDir(), 'widget.js');
  const body = readFileSync(file);
  const gzipped = gz(body);
  const editor = editorFiles();
  const editorCore = editor ? editor.core.reduce((n, b) => n + gz(b), 0) : null;
  const editorCoreMinified = editor ? editor.core.reduce((n, b) => n + b.length, 0) : null;
  const largestLanguage = editor && editor.languages.length > 0 ? Math.max(...editor.languages.map(gz)) : null;
  const result = { file, minifiedBytes: body.length, gzipBytes: gzipped, targetGzipKB: TARGET_GZIP_KB, editorCoreGzipBytes: editorCore, editorCoreMinifiedBytes: editorCoreMinified, editorLargestLanguageGzipBytes: largestLanguage };
  writeResult('widget', result);
  const editorRows = editorCore === null ? [] : [
    row({
      benchmark: 'widget',
      figure: 'code editor (fetched with `editor`) gzipped, before any language',
      unit: 'KB',
      value: editorCore / 1024,
      baseline: editorCoreMinified! / 1024,
      baselineIs: 'minified, not compressed',
      target: 'reported',
      met: null,
    }),
    ...(largestLanguage === null ? [] : [row({ benchmark: 'widget', figure: 'largest language chunk of the editor gzipped', unit: 'KB', value: largestLanguage / 1024, baseline: null, baselineIs: '', target: 'reported', met: null })]),
  ];
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
      ...editorRows,
    ],
  };
}

runIfMain(import.meta.url, benchWidget);
