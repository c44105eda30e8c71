import type { ComponentChildren, VNode } from 'preact';

// A problem statement's Markdown as page markup: headings, paragraphs, lists, block
// quotes, fenced and indented code, inline code, emphasis, and links to http(s) and
// mailto addresses. Everything else, raw HTML included, is text: the output is preact
// nodes, escaped when rendered, so a statement can never add markup, scripts or styles
// (the portal's CSP forbids inline ones anyway). $…$ stays as written.

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s]*$/i;

/** Inline text: `code`, **strong**, *em* / _em_, [text](url). */
function inline(text: string): ComponentChildren[] {
  const out: ComponentChildren[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(<code>{m[1]}</code>);
    else if (m[2] !== undefined || m[3] !== undefined) out.push(<strong>{inline(m[2] ?? m[3]!)}</strong>);
    else if (m[4] !== undefined || m[5] !== undefined) out.push(<em>{inline(m[4] ?? m[5]!)}</em>);
    else if (m[6] !== undefined) {
      const url = m[7]!;
      out.push(SAFE_URL.test(url) ? <a href={url} rel="nofollow noopener noreferrer">{inline(m[6])}</a> : `[${m[6]}](${url})`);
    }
    last = pattern.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** Blocks of a Markdown text. Headings start at h3 (the page has its h1 and the statement's h2). */
export function markdownBlocks(source: string): VNode[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: VNode[] = [];
  let i = 0;
  const para: string[] = [];
  const flush = () => {
    if (para.length > 0) blocks.push(<p>{inline(para.join(' '))}</p>);
    para.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^(```|~~~)/.exec(line);
    if (fence) {
      flush();
      const body: string[] = [];
      for (i++; i < lines.length && !lines[i]!.startsWith(fence[1]!); i++) body.push(lines[i]!);
      i++;
      blocks.push(<pre tabIndex={0}>{body.join('\n')}</pre>);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(6, heading[1]!.length + 2);
      const H = `h${level}` as 'h3';
      blocks.push(<H>{inline(heading[2]!)}</H>);
      i++;
      continue;
    }
    if (/^\s*$/.test(line)) {
      flush();
      i++;
      continue;
    }
    if (/^( {4}|\t)/.test(line) && para.length === 0) {
      const body: string[] = [];
      for (; i < lines.length && (/^( {4}|\t)/.test(lines[i]!) || lines[i]!.trim() === ''); i++) body.push(lines[i]!.replace(/^( {4}|\t)/, ''));
      blocks.push(<pre tabIndex={0}>{body.join('\n').replace(/\n+$/, '')}</pre>);
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    if (bullet) {
      flush();
      const ordered = /\d/.test(bullet[1]!);
      const items: string[] = [];
      for (; i < lines.length; i++) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]!);
        if (m) items.push(m[2]!);
        else if (lines[i]!.trim() !== '' && /^\s+/.test(lines[i]!) && items.length > 0) items[items.length - 1] += ` ${lines[i]!.trim()}`;
        else break;
      }
      const children = items.map((t) => <li>{inline(t)}</li>);
      blocks.push(ordered ? <ol>{children}</ol> : <ul>{children}</ul>);
      continue;
    }
    if (/^>\s?/.test(line)) {
      flush();
      const body: string[] = [];
      for (; i < lines.length && /^>\s?/.test(lines[i]!); i++) body.push(lines[i]!.replace(/^>\s?/, ''));
      blocks.push(<blockquote>{markdownBlocks(body.join('\n'))}</blockquote>);
      continue;
    }
    para.push(line.trim());
    i++;
  }
  flush();
  return blocks;
}

export function Markdown(p: { text: string; label: string }) {
  return (
    <div class="statement" aria-label={p.label}>
      {markdownBlocks(p.text)}
    </div>
  );
}
