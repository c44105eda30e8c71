import type { ReturnedFile, RunResult } from './verdict.js';

// The files a run brought back from /box/out/ (return_files), shown under the output by
// the playground and the widget: PNG, JPEG and SVG images as images (an <img> from a
// data: URL: an SVG's markup is never put in the page, so nothing in it runs), text
// files up to 64 KB in a <pre>, and every file as a link that downloads it.

const IMAGES = new Set(['image/png', 'image/jpeg', 'image/svg+xml']);
const TEXT_SHOWN_BYTES = 64 * 1024;

const isText = (mime: string) => mime.startsWith('text/') || mime === 'application/json' || mime === 'application/xml';

function bytesOf(base64: string): Uint8Array {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

const sizeText = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

function node<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text?: string): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The result's files as a list (empty when it brought none back). */
export function filesView(r: Pick<RunResult, 'files' | 'files_truncated' | 'files_dropped'>): HTMLElement[] {
  const files = r.files ?? [];
  const dropped = r.files_dropped ?? [];
  if (files.length === 0 && dropped.length === 0) return [];
  const list = node('ul', 'files');
  for (const f of files) list.append(fileItem(f));
  const out: HTMLElement[] = [list];
  if (r.files_truncated && dropped.length > 0) {
    out.push(node('p', 'files-dropped', `Not brought back (past the 16 files or 1 MiB a run returns): ${dropped.map((d) => `${d.name} (${sizeText(d.size)})`).join(', ')}.`));
  }
  return out;
}

function fileItem(f: ReturnedFile): HTMLLIElement {
  const item = node('li', 'file');
  const url = `data:${f.mime};base64,${f.content}`;
  const link = node('a', '', f.name);
  link.href = url;
  link.download = f.name.slice(f.name.lastIndexOf('/') + 1);
  const caption = node('p', 'file-name');
  caption.append(link, ` · ${sizeText(f.size)}`);
  if (IMAGES.has(f.mime)) {
    const img = node('img', 'file-image');
    img.src = url;
    img.alt = `${f.name}, an image the program wrote`;
    item.append(img, caption);
  } else if (isText(f.mime) && f.size <= TEXT_SHOWN_BYTES) {
    const pre = node('pre', 'file-text', new TextDecoder().decode(bytesOf(f.content)));
    pre.tabIndex = 0;
    pre.setAttribute('aria-label', f.name);
    item.append(caption, pre);
  } else {
    item.append(caption);
  }
  return item;
}
