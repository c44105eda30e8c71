import type Router from '@koa/router';
import { docPage, docsIndex } from '../docs.js';
import { sendPage } from '../render.js';
import { notFound, pageContext, PortalError, type PortalContext, type PortalState } from '../state.js';
import { DocPage } from '../views/docs.js';

// GET /docs/ and /docs/NAME: the documentation of this very version, open to anyone
// (no account needed), and offline.

export function docsRoutes(router: Router<PortalState>): void {
  router.get(['/docs', '/docs/:name'], (ctx) => {
    const c = ctx as PortalContext;
    if (ctx.path === '/docs') return ctx.redirect('/docs/');
    const name = String(c.params['name'] ?? '');
    // Links written for the repository (docs/api.md, README.md) reach their page.
    const file = /^([a-z0-9-]{1,64})\.md$/i.exec(name);
    if (file) return ctx.redirect(file[1]!.toUpperCase() === 'README' ? '/docs/' : `/docs/${file[1]!.toLowerCase()}`);
    if (docsIndex().length === 0) throw new PortalError(404, 'The documentation was not built with this install (npm run build renders it).');
    const found = /^[a-z0-9-]{0,64}$/.test(name) ? docPage(name) : undefined;
    if (!found) throw notFound();
    sendPage(ctx, <DocPage page={pageContext(c)} entries={docsIndex()} current={found.entry} html={found.html} />);
  });
}
