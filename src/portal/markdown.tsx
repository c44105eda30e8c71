import type { ComponentChildren, VNode } from 'preact';
import { mdBlocks, type MdBlock, type MdInline } from './markdown-tree.js';

// A problem statement's Markdown as page markup, from the tree src/portal/markdown-tree.ts
// reads: preact nodes, escaped when rendered, so a statement can never add markup,
// scripts or styles (the portal's CSP forbids inline ones anyway).

function inline(nodes: MdInline[]): ComponentChildren[] {
  return nodes.map((n) => {
    if (typeof n === 'string') return n;
    if (n.t === 'code') return <code>{n.text}</code>;
    if (n.t === 'strong') return <strong>{inline(n.c)}</strong>;
    if (n.t === 'em') return <em>{inline(n.c)}</em>;
    return (
      <a href={n.href} rel="nofollow noopener noreferrer">
        {inline(n.c)}
      </a>
    );
  });
}

function block(b: MdBlock): VNode {
  switch (b.t) {
    case 'p':
      return <p>{inline(b.c)}</p>;
    case 'h': {
      // Headings start at h3: the page has its h1 and the statement's h2.
      const H = `h${Math.min(6, b.level + 2)}` as 'h3';
      return <H>{inline(b.c)}</H>;
    }
    case 'pre':
      return <pre tabIndex={0}>{b.text}</pre>;
    case 'ul':
      return <ul>{b.items.map((t) => <li>{inline(t)}</li>)}</ul>;
    case 'ol':
      return <ol>{b.items.map((t) => <li>{inline(t)}</li>)}</ol>;
    case 'quote':
      return <blockquote>{b.c.map(block)}</blockquote>;
  }
}

/** Blocks of a Markdown text as preact nodes. */
export function markdownBlocks(source: string): VNode[] {
  return mdBlocks(source).map(block);
}

export function Markdown(p: { text: string; label: string }) {
  return (
    <div class="statement" aria-label={p.label}>
      {markdownBlocks(p.text)}
    </div>
  );
}
