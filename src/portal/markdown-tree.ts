// A problem statement's Markdown read into a small tree: headings, paragraphs, lists,
// block quotes, fenced and indented code, inline code, emphasis, and links to http(s)
// and mailto addresses. Everything else, raw HTML included, stays text. The portal
// renders the tree as preact nodes (src/portal/markdown.tsx), the widget as DOM nodes
// made with textContent: neither ever parses a statement as HTML. $…$ stays as written.

export type MdInline =
  | string
  | { t: 'code'; text: string }
  | { t: 'strong'; c: MdInline[] }
  | { t: 'em'; c: MdInline[] }
  | { t: 'a'; href: string; c: MdInline[] };

export type MdBlock =
  | { t: 'p'; c: MdInline[] }
  | { t: 'h'; level: number; c: MdInline[] }
  | { t: 'pre'; text: string }
  | { t: 'ul'; items: MdInline[][] }
  | { t: 'ol'; items: MdInline[][] }
  | { t: 'quote'; c: MdBlock[] };

const SAFE_URL = /^(https?:\/\/|mailto:)[^\s]*$/i;

/** Inline text: `code`, **strong**, *em* / _em_, [text](url). */
export function mdInline(text: string): MdInline[] {
  const out: MdInline[] = [];
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|\[([^\]]+)\]\(([^)\s]+)\)/g;
  let last = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push({ t: 'code', text: m[1] });
    else if (m[2] !== undefined || m[3] !== undefined) out.push({ t: 'strong', c: mdInline(m[2] ?? m[3]!) });
    else if (m[4] !== undefined || m[5] !== undefined) out.push({ t: 'em', c: mdInline(m[4] ?? m[5]!) });
    else if (m[6] !== undefined) {
      const url = m[7]!;
      out.push(SAFE_URL.test(url) ? { t: 'a', href: url, c: mdInline(m[6]) } : `[${m[6]}](${url})`);
    }
    last = pattern.lastIndex;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The blocks of a Markdown text; heading levels as written (1-6), each renderer places them under its own. */
export function mdBlocks(source: string): MdBlock[] {
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  const blocks: MdBlock[] = [];
  let i = 0;
  const para: string[] = [];
  const flush = () => {
    if (para.length > 0) blocks.push({ t: 'p', c: mdInline(para.join(' ')) });
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
      blocks.push({ t: 'pre', text: body.join('\n') });
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      blocks.push({ t: 'h', level: heading[1]!.length, c: mdInline(heading[2]!) });
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
      blocks.push({ t: 'pre', text: body.join('\n').replace(/\n+$/, '') });
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    if (bullet) {
      flush();
      const items: string[] = [];
      for (; i < lines.length; i++) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]!);
        if (m) items.push(m[2]!);
        else if (lines[i]!.trim() !== '' && /^\s+/.test(lines[i]!) && items.length > 0) items[items.length - 1] += ` ${lines[i]!.trim()}`;
        else break;
      }
      blocks.push({ t: /\d/.test(bullet[1]!) ? 'ol' : 'ul', items: items.map((t) => mdInline(t)) });
      continue;
    }
    if (/^>\s?/.test(line)) {
      flush();
      const body: string[] = [];
      for (; i < lines.length && /^>\s?/.test(lines[i]!); i++) body.push(lines[i]!.replace(/^>\s?/, ''));
      blocks.push({ t: 'quote', c: mdBlocks(body.join('\n')) });
      continue;
    }
    para.push(line.trim());
    i++;
  }
  flush();
  return blocks;
}
