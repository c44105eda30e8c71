import { sql } from 'kysely';
import { announce } from '../accounts/events.js';
import type { Db } from '../db/connect.js';
import { lockKeys } from '../db/locks.js';

// Log-in attempts are limited per address and per client IP: after too many failures
// within the window, further attempts are refused (without checking the password)
// until old failures leave the window. Counted in Postgres so every API host agrees.
//
// An attempt is written, as a failure, before its password is checked, and only while
// both counts are under their limits; the check and the write hold the address's and
// the IP's locks, so attempts made at once are counted one after another and no more
// passwords are checked than the limit allows. A correct password then marks its
// attempt succeeded.

export const LOGIN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_ADDRESS = 5;
export const MAX_FAILURES_PER_IP = 20;

/** Counts the attempt; its id, or null when the address or the IP is over its limit (the attempt is refused, not counted). */
export async function beginLogin(db: Db, email: string, ip: string): Promise<string | null> {
  // Attempts older than a day serve no limit.
  if (Math.random() < 0.01) await db.deleteFrom('login_attempts').where('at', '<', sql<Date>`now() - interval '1 day'`).execute();
  return db.transaction().execute(async (trx) => {
    // Address before IP, always.
    await lockKeys(trx, ['loginAddress', email], ['loginIp', ip]);
    const { rows } = await sql<{ id: string }>`
      INSERT INTO login_attempts (email, ip, succeeded)
      SELECT ${email}, ${ip}, false
      WHERE (SELECT count(*) FROM login_attempts WHERE email = ${email} AND NOT succeeded
               AND at > now() - make_interval(secs => ${LOGIN_WINDOW_MS / 1000})) < ${MAX_FAILURES_PER_ADDRESS}
        AND (SELECT count(*) FROM login_attempts WHERE ip = ${ip} AND NOT succeeded
               AND at > now() - make_interval(secs => ${LOGIN_WINDOW_MS / 1000})) < ${MAX_FAILURES_PER_IP}
      RETURNING id::text
    `.execute(trx);
    return rows[0]?.id ?? null;
  });
}

/** The password was right: the attempt no longer counts as a failure. */
export async function loginSucceeded(db: Db, attemptId: string, email: string, ip: string): Promise<void> {
  await db.updateTable('login_attempts').set({ succeeded: true }).where('id', '=', attemptId).execute();
  announce({ event: 'log-in', email, ip });
}

/** The password was wrong (or the address unknown): the attempt stays counted. */
export function loginFailed(email: string, ip: string): void {
  announce({ event: 'log-in failed', email, ip });
}
