import { downloadName, droppedText, fileShown, fileUrl, imageAlt, sizeText } from '../../portal/returned-files.js';
import type { ReturnedFile, RunResult } from './verdict.js';

// The files a run brought back from /box/out/ (return_files), shown under the output by
// the playground and the widget as src/portal/returned-files.ts says (images as <img>,
// text in a <pre>, every file a download link).

function bytesOf(base64: string): Uint8Array {
  const raw = atob(base64);
  const bytes = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  return bytes;
}

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
    out.push(node('p', 'files-dropped', droppedText(dropped)));
  }
  return out;
}

function fileItem(f: ReturnedFile): HTMLLIElement {
  const item = node('li', 'file');
  const url = fileUrl(f);
  const shown = fileShown(f);
  const link = node('a', '', f.name);
  link.href = url;
  link.download = downloadName(f.name);
  const caption = node('p', 'file-name');
  caption.append(link, ` · ${sizeText(f.size)}`);
  if (shown === 'image') {
    const img = node('img', 'file-image');
    img.src = url;
    img.alt = imageAlt(f.name);
    item.append(img, caption);
  } else if (shown === 'text') {
    const pre = node('pre', 'file-text', new TextDecoder().decode(bytesOf(f.content)));
    pre.tabIndex = 0;
    pre.setAttribute('aria-label', f.name);
    item.append(caption, pre);
  } else {
    item.append(caption);
  }
  return item;
}
