import { mdBlocks, type MdBlock, type MdInline } from '../../portal/markdown-tree.js';

// An exercise's statement as DOM nodes: Markdown through the portal's reader
// (src/portal/markdown-tree.ts), every piece of text set as textContent and links only
// to the addresses that reader lets through, so a statement can add no markup. A LaTeX
// statement is not typeset here: a note says so and its source is shown as written.

function node(tag: string, children: (Node | string)[] = []): HTMLElement {
  const n = document.createElement(tag);
  n.append(...children);
  return n;
}

function inline(nodes: MdInline[]): (Node | string)[] {
  return nodes.map((n) => {
    if (typeof n === 'string') return n;
    if (n.t === 'code') return node('code', [n.text]);
    if (n.t !== 'a') return node(n.t, inline(n.c));
    const a = node('a', inline(n.c)) as HTMLAnchorElement;
    a.href = n.href;
    a.rel = 'nofollow noopener noreferrer';
    a.target = '_blank';
    return a;
  });
}

function block(b: MdBlock): HTMLElement {
  // Headings sit under the exercise's name (its h3).
  if (b.t === 'h') return node(`h${Math.min(6, b.level + 3)}`, inline(b.c));
  if (b.t === 'pre') return node('pre', [b.text]);
  if (b.t === 'ul' || b.t === 'ol') return node(b.t, b.items.map((t) => node('li', inline(t))));
  if (b.t === 'quote') return node('blockquote', b.c.map(block));
  return node('p', inline(b.c));
}

export function statementView(text: string, format: 'markdown' | 'latex' | null): HTMLElement {
  const box = node('div');
  box.className = 'statement';
  if (format === 'latex') {
    const note = node('p', ['The statement is in LaTeX; its source:']);
    note.className = 'hint';
    box.append(note, node('pre', [text]));
  } else box.append(...mdBlocks(text).map(block));
  return box;
}
