import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { lockKeys } from '../db/locks.js';
import { PROBLEM_LIMITS, RATE_WINDOW_MS } from '../limits.js';

// Problem writes (create, replace, delete) are bounded per account in a rolling minute,
// whether the write is then stored or refused: each may inflate, hash and store a 64 MiB
// package. Counted in PostgreSQL under the account's lock, so every API host agrees and
// writes sent at once are counted one after another. The API counts one before its body
// is read; the portal once the form's CSRF token is checked.

/** Counts the write; null when taken, else the seconds until the oldest write of the window leaves it (the write refused, not counted). */
export async function admitProblemWrite(db: Db, accountId: string): Promise<null | { retryAfterSeconds: number }> {
  return db.transaction().execute(async (trx) => {
    await lockKeys(trx, ['problemWrites', accountId]);
    const window = sql`make_interval(secs => ${RATE_WINDOW_MS / 1000})`;
    await sql`DELETE FROM problem_writes WHERE account_id = ${accountId} AND at <= now() - ${window}`.execute(trx);
    const { rows } = await sql<{ n: number; wait: number | null }>`
      SELECT count(*)::int AS n, ceil(extract(epoch FROM min(at) + ${window} - now()))::int AS wait
        FROM problem_writes WHERE account_id = ${accountId}
    `.execute(trx);
    const { n, wait } = rows[0]!;
    if (n >= PROBLEM_LIMITS.writesPerMinute) return { retryAfterSeconds: Math.max(1, wait ?? 1) };
    await trx.insertInto('problem_writes').values({ account_id: accountId }).execute();
    return null;
  });
}

export const problemWritesRefusal = (retryAfterSeconds: number) =>
  `at most ${PROBLEM_LIMITS.writesPerMinute} problem writes (create, replace, delete) a minute per account; try again in ${retryAfterSeconds} s`;
