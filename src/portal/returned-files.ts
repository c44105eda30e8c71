// How the faces show a file a run brought back from /box/out/ (the playground, the
// widget, a submission's page): PNG, JPEG and SVG as an image (an <img> from a data:
// URL, so an SVG's markup never enters the page and nothing in it runs), text up to
// 64 KB in a <pre>, anything else as a link only. Plain data: the browser bundles
// import it too.

const IMAGES = new Set(['image/png', 'image/jpeg', 'image/svg+xml']);
const TEXT_SHOWN_BYTES = 64 * 1024;

export type FileShown = 'image' | 'text' | 'link';

export function fileShown(f: { mime: string; size: number }): FileShown {
  if (IMAGES.has(f.mime)) return 'image';
  const text = f.mime.startsWith('text/') || f.mime === 'application/json' || f.mime === 'application/xml';
  return text && f.size <= TEXT_SHOWN_BYTES ? 'text' : 'link';
}

export const fileUrl = (f: { mime: string; content: string }) => `data:${f.mime};base64,${f.content}`;

/** The name a download gets: the file's own name without its directories. */
export const downloadName = (name: string) => name.slice(name.lastIndexOf('/') + 1);

export const sizeText = (bytes: number) => (bytes < 1024 ? `${bytes} bytes` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${(bytes / 1024 / 1024).toFixed(1)} MB`);

export const droppedText = (dropped: { name: string; size: number; reason?: string }[]) => {
  const list = (reason: string) => dropped.filter((d) => (d.reason ?? 'limits') === reason).map((d) => `${d.name} (${sizeText(d.size)})`).join(', ');
  const limits = list('limits');
  const names = list('name');
  return [
    ...(limits ? [`Not brought back (past the 16 files or 1 MiB a run returns): ${limits}.`] : []),
    ...(names ? [`Not brought back (the name is not UTF-8; shown with \\x escapes): ${names}.`] : []),
  ].join(' ');
};

export const imageAlt = (name: string) => `${name}, an image the program wrote`;
