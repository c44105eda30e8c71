import { Readable } from 'node:stream';
import type Router from '@koa/router';
import { ownerAsker } from '../../problems/feedback.js';
import { allGraded, csvHeader, csvRow, FilterError, filterParams, listGraded, readFilter, type SubmissionFilter } from '../../grading/list.js';
import { inSnapshot, submissionViewJson } from '../../api/submission-view.js';
import { deliveriesPage, queueRedelivery } from '../../callbacks/redeliver.js';
import { judgedTests } from '../../judge/submission-tests.js';
import { GRADING_LIMITS, PORTAL_REDELIVERIES_PER_WINDOW, REDELIVERY_WINDOW_MS } from '../../limits.js';
import { sendPage } from '../render.js';
import { expiredMessage, expiredSubmission } from '../../retention/expired.js';
import { findSubmission } from '../submission-list.js';
import { filterChoices } from '../grading-choices.js';
import { notFound, pageContext, PortalError, type PortalContext, type PortalDeps, type PortalState } from '../state.js';
import { SubmissionPage, SubmissionsPage } from '../views/submissions.js';

// The account's submissions, one submission with its callback attempts, and Redeliver
// (queueRedelivery, limited per account; a delivery still pending is not queued twice).
// A submission the retention purge deleted is a 410 page that says so.

export function submissionRoutes(router: Router<PortalState>, deps: PortalDeps): void {
  const { db } = deps;

  /** The filter of a list's address; a wrong one is shown on the page, and lists nothing. */
  const filterOf = (c: PortalContext): { filter: SubmissionFilter; error?: string } => {
    try {
      return { filter: readFilter(c.query) };
    } catch (err) {
      if (err instanceof FilterError) return { filter: {}, error: `${err.message[0]!.toUpperCase()}${err.message.slice(1)}.` };
      throw err;
    }
  };

  router.get('/submissions', async (ctx) => {
    const c = ctx as PortalContext;
    const accountId = c.state.session!.accountId;
    const after = typeof ctx.query['after'] === 'string' ? ctx.query['after'] : undefined;
    const { filter, error } = filterOf(c);
    const list = error
      ? { items: [], more: 0, next: null }
      : await listGraded(db, accountId, filter, { limit: GRADING_LIMITS.portalPage, after });
    const choices = await filterChoices(db, accountId);
    sendPage(
      ctx,
      <SubmissionsPage
        page={pageContext(c)}
        list={list}
        first={after === undefined}
        retentionDays={deps.config.RUNBOX_RETENTION_DAYS}
        filter={filter}
        query={filterParams(filter, c.query).toString()}
        choices={choices}
        error={error}
      />,
      error ? 400 : 200,
    );
  });

  // The list as CSV: every submission the filter matches (GRADING_LIMITS.exportMaxRows at most), as GET /api/v2/submissions/?format=csv gives it.
  router.get('/submissions.csv', async (ctx) => {
    const c = ctx as PortalContext;
    const { filter, error } = filterOf(c);
    if (error) throw new PortalError(400, error);
    const rows = allGraded(db, c.state.session!.accountId, filter, { max: GRADING_LIMITS.exportMaxRows });
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', 'attachment; filename="submissions.csv"');
    ctx.body = Readable.from(
      (async function* () {
        yield csvHeader();
        for await (const l of rows) yield csvRow(l);
      })(),
    );
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
