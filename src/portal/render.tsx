import type Koa from 'koa';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

// Pages leave as complete HTML documents; preact escapes every interpolated value.
export function sendPage(ctx: Koa.Context, page: VNode, status = 200): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = '<!doctype html>' + renderToString(page);
}
