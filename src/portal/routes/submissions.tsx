import type Router from '@koa/router';
import { submissionViewJson } from '../../api/submission-view.js';
import { deliveriesOf, queueRedelivery } from '../../callbacks/redeliver.js';
import { judgedTests } from '../../judge/submission-tests.js';
import { PORTAL_REDELIVERIES_PER_WINDOW, REDELIVERY_WINDOW_MS } from '../../limits.js';
import { sendPage } from '../render.js';
import { findSubmission, listSubmissions } from '../submission-list.js';
import { notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { SubmissionPage, SubmissionsPage } from '../views/submissions.js';

// The account's submissions, one submission with its callback attempts, and Redeliver
// (queueRedelivery, limited per account; a delivery still pending is not queued twice).

export function submissionRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db } = deps;

  router.get('/submissions', async (ctx) => {
    const c = ctx as PortalContext;
    const raw = String(ctx.query['page'] ?? '1');
    const pageNo = /^\d{1,6}$/.test(raw) && Number(raw) >= 1 ? Number(raw) : 1;
    const { lines, more } = await listSubmissions(db, c.state.session!.accountId, pageNo);
    sendPage(ctx, <SubmissionsPage page={pageContext(c)} lines={lines} pageNo={pageNo} more={more} />);
  });

  const own = async (c: PortalContext) => {
    const s = await findSubmission(db, c.state.session!.accountId, String(c.params['id']));
    if (!s) throw notFound();
    return s;
  };

  router.get('/submissions/:id', async (ctx) => {
    const c = ctx as PortalContext;
    const s = await own(c);
    const notices = ctx.query['redelivered']
      ? [{ kind: 'ok' as const, text: 'The result is queued for delivery again.' }]
      : ctx.query['pending']
        ? [{ kind: 'info' as const, text: 'A delivery of this result is still pending; it was not queued again.' }]
        : [];
    // The submission as GET /api/v2/submissions/:id answers it (its field order), for the raw view.
    const json = (await submissionViewJson(db, c.state.session!.accountId, s.id))!;
    const judged = await judgedTests(db, c.state.session!.accountId, s.id);
    sendPage(ctx, <SubmissionPage page={pageContext(c)} s={s} json={json} judged={judged} deliveries={await deliveriesOf(db, s.id)} notices={notices} />);
  });

  router.post('/submissions/:id/redeliver', async (ctx) => {
    const c = ctx as PortalContext;
    const s = await own(c);
    const r = await queueRedelivery(db, s.id, { portalAccount: c.state.session!.accountId });
    if (r === null) throw new PortalError(400, 'There is no delivery to repeat, or the key has no Redirect Url any more.');
    if ('limited' in r) {
      throw new PortalError(429, `You can redeliver ${PORTAL_REDELIVERIES_PER_WINDOW} results in ${REDELIVERY_WINDOW_MS / 60_000} minutes. Try again later.`);
    }
    ctx.redirect(`/submissions/${s.id}?${'queued' in r ? 'redelivered' : 'pending'}=1`);
  });
}
