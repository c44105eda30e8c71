import type Router from '@koa/router';
import { ownerAsker } from '../../problems/feedback.js';
import { inSnapshot, submissionViewJson } from '../../api/submission-view.js';
import { deliveriesPage, queueRedelivery } from '../../callbacks/redeliver.js';
import { judgedTests } from '../../judge/submission-tests.js';
import { PORTAL_REDELIVERIES_PER_WINDOW, REDELIVERY_WINDOW_MS } from '../../limits.js';
import { sendPage } from '../render.js';
import { expiredMessage, expiredSubmission } from '../../retention/expired.js';
import { findSubmission, listSubmissions, PAGE_SIZE } from '../submission-list.js';
import { notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { SubmissionPage, SubmissionsPage } from '../views/submissions.js';

// The account's submissions, one submission with its callback attempts, and Redeliver
// (queueRedelivery, limited per account; a delivery still pending is not queued twice).
// A submission the retention purge deleted is a 410 page that says so.

export function submissionRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db } = deps;

  router.get('/submissions', async (ctx) => {
    const c = ctx as PortalContext;
    const after = typeof ctx.query['after'] === 'string' ? ctx.query['after'] : undefined;
    const list = await listSubmissions(db, c.state.session!.accountId, { limit: PAGE_SIZE, after });
    sendPage(ctx, <SubmissionsPage page={pageContext(c)} list={list} first={after === undefined} retentionDays={deps.config.RUNBOX_RETENTION_DAYS} />);
  });

  const own = async (c: PortalContext, trx = db) => {
    const accountId = c.state.session!.accountId;
    const id = String(c.params['id']);
    const s = await findSubmission(trx, accountId, id);
    if (s) return s;
    const expired = await expiredSubmission(trx, accountId, id);
    if (expired) throw new PortalError(410, `${expiredMessage(expired, deps.config.RUNBOX_RETENTION_DAYS).replace(/^submission \S+/, 'This submission')}. Its runs still count in your usage.`);
    throw notFound();
  };

  router.get('/submissions/:id', async (ctx) => {
    const c = ctx as PortalContext;
    // One snapshot: a purge committing meanwhile cannot leave the page half there.
    const { s, json, judged, deliveries } = await inSnapshot(db, async (trx) => {
      const s = await own(c, trx);
      // The submission as GET /api/v2/submissions/:id answers it (its field order), for the raw view.
      const json = (await submissionViewJson(trx, ownerAsker(c.state.session!.accountId), s.id)) ?? '{}';
      // Each judged test's verdict, and where a wrong output first differs.
      const judged = await judgedTests(trx, ownerAsker(c.state.session!.accountId), s.id);
      // Newest first, every one (a submission has a few: its delivery and the redeliveries asked for).
      return { s, json, judged, deliveries: (await deliveriesPage(trx, s.id, { limit: null })).items };
    });
    const notices = ctx.query['redelivered']
      ? [{ kind: 'ok' as const, text: 'The result is queued for delivery again.' }]
      : ctx.query['pending']
        ? [{ kind: 'info' as const, text: 'A delivery of this result is still pending; it was not queued again.' }]
        : [];
    sendPage(ctx, <SubmissionPage page={pageContext(c)} s={s} json={json} judged={judged} deliveries={deliveries} notices={notices} />);
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
