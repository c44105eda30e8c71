import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Koa from 'koa';
import { distBrowserDir } from '../util/paths.js';
import { PORTAL_CSS } from './styles.js';

// Static assets of the portal, each under a name carrying a hash of its content so it
// can be cached for a year: the style sheet, and the browser bundles that
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

let loaded = false;
function load(): void {
  if (loaded) return;
  loaded = true;
  add('portal', 'css', 'text/css; charset=utf-8', Buffer.from(PORTAL_CSS));
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
    if (!ctx.path.startsWith('/assets/') || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    load();
    const asset = byUrl.get(ctx.path);
    if (!asset) return next();
    ctx.type = asset.type;
    ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
    ctx.body = asset.body;
  };
}
