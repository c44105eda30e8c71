import { sql } from 'kysely';
import { announce } from '../accounts/events.js';
import type { Db } from '../db/connect.js';

// Log-in attempts are limited per address and per client IP: after too many failures
// within the window, further attempts are refused (without checking the password)
// until old failures leave the window. Counted in Postgres so every API host agrees.

export const LOGIN_WINDOW_MS = 15 * 60_000;
export const MAX_FAILURES_PER_ADDRESS = 5;
export const MAX_FAILURES_PER_IP = 20;

export async function loginBlocked(db: Db, email: string, ip: string): Promise<boolean> {
  const { rows } = await sql<{ by_email: number; by_ip: number }>`
    SELECT (SELECT count(*) FROM login_attempts WHERE email = ${email} AND NOT succeeded
              AND at > now() - make_interval(secs => ${LOGIN_WINDOW_MS / 1000}))::int AS by_email,
           (SELECT count(*) FROM login_attempts WHERE ip = ${ip} AND NOT succeeded
              AND at > now() - make_interval(secs => ${LOGIN_WINDOW_MS / 1000}))::int AS by_ip
  `.execute(db);
  const r = rows[0]!;
  return r.by_email >= MAX_FAILURES_PER_ADDRESS || r.by_ip >= MAX_FAILURES_PER_IP;
}

export async function recordLogin(db: Db, email: string, ip: string, succeeded: boolean): Promise<void> {
  await db.insertInto('login_attempts').values({ email, ip, succeeded }).execute();
  announce({ event: succeeded ? 'log-in' : 'log-in failed', email, ip });
  // Attempts older than a day serve no limit.
  if (Math.random() < 0.01) await db.deleteFrom('login_attempts').where('at', '<', sql<Date>`now() - interval '1 day'`).execute();
}
