import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type Koa from 'koa';
import { distBrowserDir } from '../../util/paths.js';
import { LOADER_MAX_AGE_SECONDS } from '../../util/superseded-assets.js';
import { ApiError } from '../errors.js';

// The browser bundles other sites load (the widget: /widget/v1.js, and the editor it
// may fetch). Answered ahead of
// the API's Accept rules, since a browser asks for a script with its own Accept
// header. Any origin may load them (a module script from another origin needs CORS).
// The editor's files are named by their content's hash, so caches keep them for a
// year; the loader (v1.js) changes with each release and is kept a day, and the editor
// files an earlier loader names stay served a week after a build stopped naming them
// (src/util/superseded-assets.ts). Each file is read (and gzipped) once, on its first
// request.

export const BROWSER_ASSETS: Record<string, string> = {
  '/widget/v1.js': 'widget.js',
};

/**
 * The code editor the widget (its `editor` attribute) and the playground fetch when
 * they need it: dist/browser/editor/, every file named by a hash of its content.
 */
const EDITOR_FILE = /^\/widget\/editor\/((?:editor|chunk)-[A-Za-z0-9_-]{6,16}\.js)$/;

/** Whether `path` is one of these bundles' (the app sends such paths here). */
export const isBrowserAsset = (path: string): boolean => fileOf(path) !== undefined;

function fileOf(path: string): string | undefined {
  const editor = EDITOR_FILE.exec(path);
  return editor ? `editor/${editor[1]}` : BROWSER_ASSETS[path];
}

interface Asset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

const CACHE_FOREVER = 'public, max-age=31536000, immutable';
/** The loader: asked for again after a day (usually a 304, by its ETag), so a release reaches the pages in a day. */
const CACHE_LOADER = `public, max-age=${LOADER_MAX_AGE_SECONDS}`;

export function browserAssets(dir: string = distBrowserDir()): Koa.Middleware {
  const loaded = new Map<string, Asset>();
  const load = (file: string): Asset => {
    let asset = loaded.get(file);
    if (!asset) {
      const body = readFileSync(join(dir, file));
      asset = { body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      loaded.set(file, asset);
    }
    return asset;
  };
  return async (ctx, next) => {
    const file = fileOf(ctx.path);
    if (!file) return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cross-Origin-Resource-Policy', 'cross-origin');
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ApiError(405, 'method_not_allowed', `${ctx.method} is not allowed here; allowed: GET, HEAD`, { Allow: 'GET, HEAD' });
    }
    let asset: Asset;
    try {
      asset = load(file);
    } catch {
      throw new ApiError(404, 'not_found', `${ctx.path} is not built on this server (npm run build)`);
    }
    ctx.set('Cache-Control', file.startsWith('editor/') ? CACHE_FOREVER : CACHE_LOADER);
    ctx.set('ETag', asset.etag);
    ctx.set('Vary', 'Accept-Encoding');
    ctx.type = 'text/javascript; charset=utf-8';
    if (ctx.get('If-None-Match') === asset.etag) {
      ctx.status = 304;
      return;
    }
    if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzip;
    } else {
      ctx.body = asset.body;
    }
  };
}
