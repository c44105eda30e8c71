import type Router from '@koa/router';
import { listKeys } from '../../accounts/keys.js';
import { deploymentAvailability } from '../../compilers/deployment.js';
import { sendPage } from '../render.js';
import { baseUrl, pageContext, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { PlaygroundPage } from '../views/playground.js';

export function playgroundRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db, config } = deps;
  router.get('/playground', async (ctx) => {
    const c = ctx as PortalContext;
    const [compilers, keys] = await Promise.all([
      deploymentAvailability(db, config),
      listKeys(db, c.state.session!.accountId),
    ]);
    sendPage(ctx, <PlaygroundPage page={pageContext(c)} compilers={compilers} keys={keys.filter((k) => k.revoked_at === null && k.kind === 'api')} base={baseUrl(ctx, config)} />);
  });
}
