import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { distBrowserDir } from '../util/paths.js';

// The documentation as `npm run build` rendered it (scripts/build-docs.mjs): README.md
// and docs/*.md as HTML fragments in dist/browser/docs/, read once. Served at /docs/.

export interface DocEntry {
  /** Its path under /docs/ ('' for the README). */
  name: string;
  title: string;
  source: string;
}

let index: DocEntry[] | undefined;
const pages = new Map<string, string>();

export function docsIndex(): DocEntry[] {
  if (index) return index;
  const file = join(distBrowserDir(), 'docs', 'index.json');
  index = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as DocEntry[]) : [];
  return index;
}

/** A document's entry and its HTML, or undefined for a name that is not one. */
export function docPage(name: string): { entry: DocEntry; html: string } | undefined {
  const entry = docsIndex().find((d) => d.name === name);
  if (!entry) return undefined;
  let html = pages.get(name);
  if (html === undefined) {
    html = readFileSync(join(distBrowserDir(), 'docs', `${name || 'index'}.html`), 'utf8');
    pages.set(name, html);
  }
  return { entry, html };
}
