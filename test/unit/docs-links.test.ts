import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect } from 'chai';
import GithubSlugger from 'github-slugger';
import { marked, type Token } from 'marked';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// Every relative link in the documentation leads somewhere: the file exists and, for a
// link with #anchor into a Markdown file, a heading of that file has that anchor (as
// GitHub makes them). Links are read with a Markdown parser, so code is not mistaken
// for a link.

const DOCS = [
  'README.md',
  'rootfs/README.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function tokens(file: string): Token[] {
  return marked.lexer(readFileSync(join(PROJECT_ROOT, file), 'utf8'));
}

export function linksOf(file: string): string[] {
  const out: string[] = [];
  marked.walkTokens(tokens(file), (t) => {
    if (t.type === 'link') out.push((t as { href: string }).href);
  });
  return out;
}

export function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const out = new Set<string>();
  marked.walkTokens(tokens(file), (t) => {
    if (t.type === 'heading') out.add(slugger.slug((t as { text: string }).text));
  });
  return out;
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
export function brokenLink(file: string, href: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return undefined; // https:, mailto: and the like
  const hash = href.indexOf('#');
  const path = decodeURIComponent(hash < 0 ? href : href.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(href.slice(hash + 1));
  const target = path === '' ? join(PROJECT_ROOT, file) : resolve(dirname(join(PROJECT_ROOT, file)), path);
  const shown = relative(PROJECT_ROOT, target);
  if (shown.startsWith('..')) return `${href}: leaves the repository`;
  if (!existsSync(target)) return `${href}: ${shown} does not exist`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!target.endsWith('.md') || statSync(target).isDirectory()) return undefined;
  if (!anchorsOf(shown).has(anchor)) return `${href}: ${shown} has no heading with anchor #${anchor}`;
  return undefined;
}

describe('documentation links', () => {
  it('finds the documents and their links', () => {
    expect(DOCS).to.include.members(['docs/api.md', 'docs/operating.md', 'docs/security.md', 'docs/configuration.md']);
    expect(linksOf('README.md').length).to.be.greaterThan(5);
  });

  it('reports a missing file, a missing anchor and a link out of the repository', () => {
    expect(brokenLink('README.md', 'docs/nothing-here.md')).to.match(/does not exist/);
    expect(brokenLink('README.md', 'docs/api.md#no-such-heading')).to.match(/no heading with anchor #no-such-heading/);
    expect(brokenLink('docs/api.md', '../../etc/passwd')).to.match(/leaves the repository/);
    expect(brokenLink('docs/api.md', '#callbacks')).to.equal(undefined);
    expect(brokenLink('README.md', 'https://example.com/#x')).to.equal(undefined);
  });

  for (const file of DOCS) {
    it(`every relative link in ${file} resolves`, () => {
      const broken = linksOf(file)
        .map((href) => brokenLink(file, href))
        .filter((e): e is string => e !== undefined);
      expect(broken).to.deep.equal([]);
    });
  }

  it('README.md links every document in docs/', () => {
    const linked = new Set(linksOf('README.md').map((h) => h.split('#')[0]));
    const missing = DOCS.filter((f) => f.startsWith('docs/') && !linked.has(f));
    expect(missing).to.deep.equal([]);
  });
});

describe('documentation wording', () => {
  const all = DOCS.map((f) => ({ f, text: readFileSync(join(PROJECT_ROOT, f), 'utf8') }));

  it('README.md is a landing page of under 300 lines', () => {
    const lines = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8').split('\n').length;
    expect(lines).to.be.lessThan(300);
  });

  it('names "Redirect Url (the callback URL)" once and says "callback URL" everywhere else', () => {
    const mentions = all.flatMap(({ f, text }) => (text.match(/Redirect Url|redirect URL/g) ?? []).map((m) => `${f}: ${m}`));
    expect(mentions).to.deep.equal(['README.md: Redirect Url']);
    expect(readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8')).to.include('Redirect Url (the callback URL)');
  });

  it('cites no numbered section of a document the reader does not have', () => {
    const cites = all.filter(({ text }) => /spec(ification)? sections? \d/i.test(text)).map(({ f }) => f);
    expect(cites).to.deep.equal([]);
  });
});
