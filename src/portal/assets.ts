import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import { distBrowserDir } from '../util/paths.js';
import { PORTAL_CSS } from './styles.js';

// Static assets of the portal, each under a name carrying a hash of its content so it
// can be cached for a year: the style sheet, the tab icon, and the browser bundles that
// `npm run build` puts in dist/browser/ (copy buttons, the playground).

interface Asset {
  url: string;
  type: string;
  body: Buffer;
}

const byUrl = new Map<string, Asset>();
const byName = new Map<string, Asset>();

function add(name: string, ext: string, type: string, body: Buffer): void {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  const asset = { url: `/assets/${name}-${hash}.${ext}`, type, body };
  byUrl.set(asset.url, asset);
  byName.set(`${name}.${ext}`, asset);
}

// The tab icon: a prompt on the brand's blue.
const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4f8f"/>' +
  '<path d="M8 10l6 6-6 6M16 23h8" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>';
const SVG_TYPE = 'image/svg+xml';

let loaded = false;
function load(): void {
  if (loaded) return;
  loaded = true;
  add('portal', 'css', 'text/css; charset=utf-8', Buffer.from(PORTAL_CSS));
  add('icon', 'svg', SVG_TYPE, Buffer.from(ICON_SVG));
  for (const name of ['portal', 'playground']) {
    const file = join(distBrowserDir(), `${name}.js`);
    if (existsSync(file)) add(name, 'js', 'text/javascript; charset=utf-8', readFileSync(file));
  }
}

/** The versioned URL of an asset ("portal.css", "playground.js"); undefined when it was not built. */
export function assetUrl(name: string): string | undefined {
  load();
  return byName.get(name)?.url;
}

export function serveAssets(): Koa.Middleware {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ctx.path === '/favicon.ico') {
      // Asked for by browsers on their own, before any page names its icon: the same
      // icon, open to anyone (not a redirect to log in).
      load();
      ctx.type = SVG_TYPE;
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.body = byName.get('icon.svg')!.body;
      return;
    }
    if (!ctx.path.startsWith('/assets/')) return next();
    load();
    const asset = byUrl.get(ctx.path);
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = asset.body;
  };
}
