import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Portal sessions in Postgres. The cookie holds a random id; the table holds only its
// SHA-256, so a read of the table cannot be replayed as a cookie. A session ends after
// IDLE_MS without a request or ABSOLUTE_MS after log-in, whichever comes first, and at
// log-out (the row is deleted).

export const SESSION_COOKIE = 'rbx_session';
export const IDLE_MS = 12 * 3600_000;
export const ABSOLUTE_MS = 7 * 24 * 3600_000;
/** last_seen_at is written at most this often, not on every request. */
const TOUCH_MS = 60_000;

export interface Session {
  idHash: Buffer;
  accountId: string;
  email: string;
  emailVerified: boolean;
  csrfToken: string;
}

const hashId = (id: string) => createHash('sha256').update(id, 'utf8').digest();

export async function createSession(db: Db, accountId: string): Promise<{ id: string; csrfToken: string }> {
  const id = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  await db
    .insertInto('portal_sessions')
    .values({ id_hash: hashId(id), account_id: accountId, csrf_token: csrfToken, expires_at: sql<Date>`now() + make_interval(secs => ${ABSOLUTE_MS / 1000})` })
    .execute();
  return { id, csrfToken };
}

/** The live session with this cookie value, its idle time refreshed; undefined when unknown or expired. */
export async function findSession(db: Db, id: string): Promise<Session | undefined> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
  const idHash = hashId(id);
  const row = await db
    .selectFrom('portal_sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .select(['s.account_id', 's.csrf_token', 's.last_seen_at', 'a.email', 'a.email_verified_at'])
    .where('s.id_hash', '=', idHash)
    // Only accounts with an address log in (marketplace subscribers' have none).
    .where('a.email', 'is not', null)
    .$narrowType<{ email: string }>()
    .where('s.expires_at', '>', sql<Date>`now()`)
    .where('s.last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${IDLE_MS / 1000})`)
    .executeTakeFirst();
  if (!row) return undefined;
  if (Date.now() - row.last_seen_at.getTime() > TOUCH_MS) {
    await db.updateTable('portal_sessions').set({ last_seen_at: sql<Date>`now()` }).where('id_hash', '=', idHash).execute();
  }
  return { idHash, accountId: row.account_id, email: row.email, emailVerified: row.email_verified_at !== null, csrfToken: row.csrf_token };
}

export async function endSession(db: Db, idHash: Buffer): Promise<void> {
  await db.deleteFrom('portal_sessions').where('id_hash', '=', idHash).execute();
}

/** Ends every session of the account ("log out everywhere", a password change or reset). */
export async function endAllSessions(db: Db, accountId: string): Promise<number> {
  const res = await db.deleteFrom('portal_sessions').where('account_id', '=', accountId).executeTakeFirst();
  // Expired rows of anyone are dropped on the way.
  await db.deleteFrom('portal_sessions').where('expires_at', '<', sql<Date>`now()`).execute();
  return Number(res.numDeletedRows);
}
