import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { crossedThresholds } from './thresholds.js';

// Writes the usage emails a new submission's usage calls for, inside the admission
// transaction (which holds the account's lock). ON CONFLICT DO NOTHING: an email
// already written this month for that threshold (even before a refund brought usage
// back down) is not written again. Accounts without an address (marketplace
// subscribers, who hear from the marketplace) get none.

export const MAIL_CHANNEL = 'runbox_mail';

export interface UsageMove {
  accountId: string;
  keyId: string | null;
  month: string;
  before: number;
  after: number;
  limit: number;
  keyBefore: number;
  keyAfter: number;
  keyLimit: number | null;
}

export async function enqueueUsageEmails(trx: Transaction<Database>, m: UsageMove): Promise<number> {
  const rows: { keyId: string | null; threshold: number; used: number; limit: number }[] = [
    ...crossedThresholds(m.before, m.after, m.limit).map((t) => ({ keyId: null, threshold: t, used: m.after, limit: m.limit })),
    ...(m.keyId === null
      ? []
      : crossedThresholds(m.keyBefore, m.keyAfter, m.keyLimit).map((t) => ({ keyId: m.keyId, threshold: t, used: m.keyAfter, limit: m.keyLimit! }))),
  ];
  let written = 0;
  for (const r of rows) {
    const res = await sql`
      INSERT INTO usage_emails (account_id, key_id, month, threshold, used, monthly_limit, to_address)
      SELECT a.id, ${r.keyId}, ${m.month}, ${r.threshold}, ${r.used}, ${r.limit}, a.email FROM accounts a
       WHERE a.id = ${m.accountId} AND a.email IS NOT NULL
      ON CONFLICT DO NOTHING
    `.execute(trx);
    written += Number(res.numAffectedRows ?? 0);
  }
  // Delivered to mailers only when the admission commits.
  if (written > 0) await sql`SELECT pg_notify(${MAIL_CHANNEL}, '')`.execute(trx);
  return written;
}
