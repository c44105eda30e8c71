import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { lockKeys } from '../db/locks.js';

// Sign-ups are limited per client address (RUNBOX_SIGNUPS_PER_HOUR in a rolling hour),
// counted in Postgres so every API host agrees. Every sign-up that reaches the address
// check counts, whether it makes an account or finds one already there, so the limit
// also bounds how often one client can probe addresses or have notes sent to owners.
// As for log-ins, the count and the write hold the IP's lock: sign-ups sent at once
// are counted one after another.

export const SIGNUP_WINDOW_MS = 3600_000;

/** Counts the sign-up; false when the address has used its allowance (the attempt is refused, not counted). */
export async function admitSignup(db: Db, ip: string, perHour: number): Promise<boolean> {
  // Attempts older than a day serve no limit.
  if (Math.random() < 0.01) await db.deleteFrom('signup_attempts').where('at', '<', sql<Date>`now() - interval '1 day'`).execute();
  return db.transaction().execute(async (trx) => {
    await lockKeys(trx, ['signupIp', ip]);
    const { rows } = await sql<{ id: string }>`
      INSERT INTO signup_attempts (ip)
      SELECT ${ip}
      WHERE (SELECT count(*) FROM signup_attempts WHERE ip = ${ip}
               AND at > now() - make_interval(secs => ${SIGNUP_WINDOW_MS / 1000})) < ${perHour}
      RETURNING id::text
    `.execute(trx);
    return rows.length > 0;
  });
}
