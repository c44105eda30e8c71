import { dedent } from './editing.js';

// What the page gives the widget inside the element: the code (the element's own text,
// HTML-escaped, or a <script type="text/plain"> child), or several files (children
// `<script type="text/plain" data-file="name">`, the one marked `data-main` or else the
// first being the program), and an expected output (a `data-expected` child).

export interface Source {
  /** The file's name; '' for code written under the compiler's own name. */
  name: string;
  text: string;
  main: boolean;
}

export interface Sources {
  sources: Source[];
  expected: string | null;
  /** An element the browser made of code like `<iostream>` written unescaped in the element's text. */
  lostTag: string | undefined;
}

export function sourcesOf(host: HTMLElement): Sources {
  const scripts = [...host.querySelectorAll<HTMLScriptElement>(':scope > script[type="text/plain"]')];
  const expectedScript = scripts.find((s) => s.hasAttribute('data-expected'));
  // Indented like the code around it in the page: the common indentation is not part of it.
  const expected = expectedScript ? dedent(expectedScript.textContent ?? '') : null;
  const files = scripts.filter((s) => s.hasAttribute('data-file'));
  if (files.length > 0) {
    const sources = files.map((s) => ({ name: s.dataset['file'] ?? '', text: dedent(s.textContent ?? ''), main: s.hasAttribute('data-main') }));
    if (!sources.some((s) => s.main)) sources[0]!.main = true;
    return { sources, expected, lostTag: undefined };
  }
  const code = scripts.find((s) => s !== expectedScript);
  if (code) return { sources: [{ name: '', text: dedent(code.textContent ?? ''), main: true }], expected, lostTag: undefined };
  // The element's own text, without its script children's.
  const text = [...host.childNodes].filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join('');
  const lost = [...host.children].find((c) => !(c instanceof HTMLScriptElement));
  return { sources: [{ name: '', text: dedent(lost ? (host.textContent ?? '') : text), main: true }], expected, lostTag: lost?.localName };
}

/** The `args` attribute: a JSON array of strings, or else words separated by spaces. */
export function programArgs(attr: string | null): string[] {
  const text = (attr ?? '').trim();
  if (text === '') return [];
  if (text.startsWith('[')) {
    try {
      const list: unknown = JSON.parse(text);
      if (Array.isArray(list)) return list.map(String);
    } catch {
      // Not JSON after all: words.
    }
  }
  return text.split(/\s+/);
}
