#!/usr/bin/env node
// Renders the documentation (README.md, docs/*.md and rootfs/README.md) into HTML fragments under
// dist/browser/docs/, which the portal serves at /docs/ inside its own page frame: the
// documentation of the very version that runs, offline, on every self-hosted install
// (scripts/install copies dist/browser). Headings get GitHub's anchors, so links with
// #anchor keep working; links between the documents become /docs/ links; a link to
// any other file of the repository (not served) is kept as its text.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import GithubSlugger from 'github-slugger';
import { Marked } from 'marked';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'dist/browser/docs');

/** Repository path of a document → its name under /docs/ ('' for the README). */
// rootfs/README.md (the images, their sizes and the recipe fields) is served as /docs/images.
const docName = (path) =>
  path === 'README.md' ? '' : path === 'rootfs/README.md' ? 'images' : path.replace(/^docs\//, '').replace(/\.md$/, '');

const sources = [
  'README.md',
  ...readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`),
  'rootfs/README.md',
];
const known = new Set(sources);

const escape = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function render(path) {
  const slugger = new GithubSlugger();
  let title;
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth, text }) {
        const id = slugger.slug(text);
        // The page frame writes the title as the page's own <h1>.
        if (depth === 1 && title === undefined) {
          title = text;
          return '';
        }
        return `<h${depth} id="${escape(id)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link({ href, tokens }) {
        const inner = this.parser.parseInline(tokens);
        if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return `<a href="${escape(href)}">${inner}</a>`;
        const hash = href.indexOf('#');
        const file = hash < 0 ? href : href.slice(0, hash);
        const anchor = hash < 0 ? '' : href.slice(hash);
        if (file === '') return `<a href="${escape(anchor)}">${inner}</a>`;
        const target = posix.normalize(posix.join(posix.dirname(path), file));
        if (known.has(target)) return `<a href="/docs/${escape(docName(target))}${escape(anchor)}">${inner}</a>`;
        return `<span class="doc-file" title="${escape(target)} in the source">${inner}</span>`;
      },
      table(token) {
        // Wide tables scroll in a box of their own (focusable for the keyboard), never the page.
        const html = this.constructor.prototype.table.call(this, token);
        return `<div class="table-box" role="region" aria-label="Table" tabindex="0">${html}</div>\n`;
      },
    },
  });
  const html = marked.parse(readFileSync(join(root, path), 'utf8'));
  return { title: title ?? docName(path), html };
}

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const index = [];
for (const path of sources) {
  const { title, html } = render(path);
  const name = docName(path) || 'index';
  writeFileSync(join(out, `${name}.html`), html);
  index.push({ name: docName(path), title, source: path });
}
writeFileSync(join(out, 'index.json'), JSON.stringify(index, null, 2));
