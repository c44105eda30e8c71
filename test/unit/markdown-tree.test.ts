import { expect } from 'chai';
import { mdBlocks } from '../../src/portal/markdown-tree.js';

// The statement reader the portal and the widget share: what becomes structure, and
// what stays text (raw HTML, links to other schemes).

describe('a statement read as Markdown', () => {
  it('reads headings, paragraphs, lists, fenced code and inline marks', () => {
    expect(mdBlocks('# Sum\n\nAdd **two** numbers `a` and *b*.\n\n- one\n- two\n\n```\n1 2\n```\n')).to.deep.equal([
      { t: 'h', level: 1, c: ['Sum'] },
      { t: 'p', c: ['Add ', { t: 'strong', c: ['two'] }, ' numbers ', { t: 'code', text: 'a' }, ' and ', { t: 'em', c: ['b'] }, '.'] },
      { t: 'ul', items: [['one'], ['two']] },
      { t: 'pre', text: '1 2' },
    ]);
  });
  it('keeps raw HTML and links to other schemes as text; links to http(s) as links', () => {
    expect(mdBlocks('<img src=x onerror=alert(1)> [a](https://example.org/x) [b](javascript:void0) [c](data:text/html,x)')).to.deep.equal([
      { t: 'p', c: ['<img src=x onerror=alert(1)> ', { t: 'a', href: 'https://example.org/x', c: ['a'] }, ' ', '[b](javascript:void0)', ' ', '[c](data:text/html,x)'] },
    ]);
  });
});
