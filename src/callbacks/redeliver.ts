import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import { lockKeys } from '../db/locks.js';
import { PORTAL_REDELIVERIES_PER_WINDOW, REDELIVERY_WINDOW_MS } from '../limits.js';
import { CALLBACKS_CHANNEL } from './delivery.js';

/** Who asks: an account in the portal (counted and limited), or the operator (neither). */
export type Redeliverer = { portalAccount: string } | 'operator';

/**
 * queued: a new delivery; already: a delivery of the submission was still pending (waiting
 * or being attempted), so nothing was added; limited: the account has used its
 * redeliveries for now; null: nothing to repeat.
 */
export type Redelivery = { queued: string } | { already: string } | { limited: true } | null;

/**
 * Queues the submission's result for delivery once more, as a new delivery (new
 * delivery id, attempts from zero) to the key's current redirect URL (or the
 * submission's own callback target, when it named one), keeping the earlier
 * deliveries as history — unless one is still pending, which is sent once, not twice.
 *
 * The check and the insert hold the submission's lock (and, from the portal, the
 * account's first), so clicks sent at once queue one delivery and are counted one
 * after another.
 */
export async function queueRedelivery(db: Db, submissionId: string, by: Redeliverer): Promise<Redelivery> {
  return db.transaction().execute(async (trx) => {
    if (by !== 'operator') await lockKeys(trx, ['redeliverAccount', by.portalAccount]);
    await lockKeys(trx, ['redeliverSubmission', submissionId]);
    const pending = await trx
      .selectFrom('callback_deliveries')
      .select('id')
      .where('submission_id', '=', submissionId)
      .where('state', '=', 'pending')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    if (pending) return { already: pending.id };
    if (by !== 'operator') {
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM callback_deliveries d JOIN api_keys k ON k.id = d.key_id
        WHERE k.account_id = ${by.portalAccount} AND d.redelivered_by = 'portal'
          AND d.created_at > now() - make_interval(secs => ${REDELIVERY_WINDOW_MS / 1000})
      `.execute(trx);
      if (rows[0]!.n >= PORTAL_REDELIVERIES_PER_WINDOW) return { limited: true };
    }
    const { rows } = await sql<{ id: string }>`
      WITH last AS (
        SELECT d.submission_id, d.key_id, d.payload, d.url, d.method, d.format, s.callback IS NOT NULL AS own_target
        FROM callback_deliveries d JOIN submissions s ON s.id = d.submission_id
        WHERE d.submission_id = ${submissionId}
        ORDER BY d.created_at DESC LIMIT 1
      ),
      added AS (
        -- A submission that named its own target (Judge0's callback_url) goes there again.
        INSERT INTO callback_deliveries (submission_id, key_id, url, method, format, payload, redelivered_by)
        SELECT last.submission_id, last.key_id, CASE WHEN last.own_target THEN last.url ELSE k.redirect_url END,
               last.method, last.format, last.payload, ${by === 'operator' ? 'operator' : 'portal'}
        FROM last JOIN api_keys k ON k.id = last.key_id
        WHERE last.own_target OR (k.redirect_url IS NOT NULL AND k.redirect_url <> '')
        RETURNING id
      )
      SELECT id::text, pg_notify(${CALLBACKS_CHANNEL}, id::text) FROM added
    `.execute(trx);
    return rows[0] ? { queued: rows[0].id } : null;
  });
}

/**
 * The operator's redelivery (`runbox-admin callback redeliver`): the pending delivery's
 * id when one was still pending, else the new one's; null when there is nothing to repeat.
 */
export async function redeliver(db: Db, submissionId: string): Promise<string | null> {
  const r = await queueRedelivery(db, submissionId, 'operator');
  return r === null ? null : 'queued' in r ? r.queued : 'already' in r ? r.already : null;
}

export interface DeliveryRow {
  id: string;
  url: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** Every delivery of a submission, oldest first. */
export async function deliveriesOf(db: Db, submissionId: string): Promise<DeliveryRow[]> {
  const { rows } = await sql<DeliveryRow>`
    SELECT id::text, url, state, attempts, last_status, last_error,
           CASE WHEN state = 'pending' THEN run_at END AS next_attempt_at, created_at, delivered_at
    FROM callback_deliveries WHERE submission_id = ${submissionId}
    ORDER BY created_at, id
  `.execute(db);
  return rows;
}

/** A page of a submission's deliveries, newest first (the CLI's and the portal's list), and how many more. */
export async function deliveriesPage(db: Db, submissionId: string, page: PageRequest): Promise<Page<DeliveryRow>> {
  // Keyset on (created_at, id): a redelivery made in the same transaction as another shares its time.
  const older = (after: string | null) => sql`
    AND (${after}::uuid IS NULL OR (created_at, id) < (SELECT created_at, id FROM callback_deliveries WHERE id = ${after}::uuid))`;
  const { rows } = await sql<DeliveryRow>`
    SELECT id::text, url, state, attempts, last_status, last_error,
           CASE WHEN state = 'pending' THEN run_at END AS next_attempt_at, created_at, delivered_at
    FROM callback_deliveries WHERE submission_id = ${submissionId} ${older(page.after ?? null)}
    ORDER BY created_at DESC, id DESC
    LIMIT ${page.limit ?? null}
  `.execute(db);
  return pageOf(rows, page, (d) => d.id, async (last) =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM callback_deliveries WHERE submission_id = ${submissionId} ${older(last)}`.execute(db)).rows[0]!.n,
  );
}
