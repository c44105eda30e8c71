import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import { MAIL_CHANNEL } from './enqueue.js';

// What an operator sees of the usage email outbox (`runbox-admin email list`), and
// sending one again (`runbox-admin email resend`).

export type EmailState = 'pending' | 'sent' | 'dead';
export const EMAIL_STATES: readonly EmailState[] = ['pending', 'sent', 'dead'];

export interface EmailRow {
  id: string;
  account_id: string;
  key_id: string | null;
  to_address: string;
  month: string;
  threshold: number;
  state: EmailState;
  attempts: number;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  sent_at: Date | null;
}

export interface EmailFilter {
  state?: EmailState | undefined;
  accountId?: string | undefined;
}

const COLUMNS = sql`id::text, account_id::text, key_id::text, to_address, month, threshold, state, attempts, last_error,
  CASE WHEN state = 'pending' THEN run_at END AS next_attempt_at, created_at, sent_at`;

/** A page of usage emails, newest first, and how many more. */
export async function listEmails(db: Db, f: EmailFilter, page: PageRequest): Promise<Page<EmailRow>> {
  const where = (before: string | null) => sql`
    WHERE (${f.state ?? null}::text IS NULL OR state = ${f.state ?? null})
      AND (${f.accountId ?? null}::bigint IS NULL OR account_id = ${f.accountId ?? null})
      AND (${before}::bigint IS NULL OR id < ${before})`;
  const { rows } = await sql<EmailRow>`
    SELECT ${COLUMNS} FROM usage_emails ${where(page.after ?? null)}
    ORDER BY id DESC
    LIMIT ${page.limit ?? null}
  `.execute(db);
  return pageOf(rows, page, (e) => e.id, async (last) => (await sql<{ n: number }>`SELECT count(*)::int AS n FROM usage_emails ${where(last)}`.execute(db)).rows[0]!.n);
}

export type ResendOutcome = { resent: EmailRow } | { refused: string };

/**
 * Puts one email back in the outbox, due now with its attempts from zero, whatever it
 * ended as (dead, or sent and lost on the way). An email a mailer holds right now is
 * left alone.
 */
export async function resendEmail(db: Db, id: string): Promise<ResendOutcome> {
  const { rows } = await sql<EmailRow>`
    WITH again AS (
      UPDATE usage_emails
      SET state = 'pending', attempts = 0, run_at = now(), sent_at = NULL, locked_by = NULL, lease_expires_at = NULL
      WHERE id = ${id} AND NOT (state = 'pending' AND lease_expires_at >= now())
      RETURNING *
    ),
    woken AS (SELECT pg_notify(${MAIL_CHANNEL}, '') FROM again)
    SELECT ${COLUMNS} FROM again, woken
  `.execute(db);
  if (rows[0]) return { resent: rows[0] };
  const exists = await db.selectFrom('usage_emails').select('id').where('id', '=', id).executeTakeFirst();
  return { refused: exists ? `usage email ${id} is being sent right now` : `no usage email ${id}` };
}
