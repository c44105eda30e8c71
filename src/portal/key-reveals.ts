import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// A new key (or a new signing secret) waits here for the one page that shows it: the
// form that made it answers with a redirect, and the page behind the redirect takes
// the row (delete … returning). A reload of that page finds nothing and shows nothing,
// and never makes a second key. The row is tied to the portal session that made the
// key; after REVEAL_MS it is never shown, and is deleted soon after.

export const REVEAL_MS = 10 * 60_000;

export interface Reveal {
  key: string | null;
  signing_secret: string | null;
}

/** Rows past their time are never shown; they go at the next hold or take of any key. */
const dropExpired = (db: Db) => db.deleteFrom('key_reveals').where('expires_at', '<=', sql<Date>`now()`).execute();

export async function holdReveal(db: Db, sessionIdHash: Buffer, keyId: string, reveal: Reveal): Promise<void> {
  await dropExpired(db);
  await db
    .insertInto('key_reveals')
    .values({ session_id_hash: sessionIdHash, key_id: keyId, ...reveal, expires_at: sql<Date>`now() + make_interval(secs => ${REVEAL_MS / 1000})` })
    .onConflict((oc) => oc.columns(['session_id_hash', 'key_id']).doUpdateSet((eb) => ({ key: eb.ref('excluded.key'), signing_secret: eb.ref('excluded.signing_secret'), expires_at: eb.ref('excluded.expires_at') })))
    .execute();
}

/** What waits for this session and key, removed as it is read; undefined when shown already or expired. */
export async function takeReveal(db: Db, sessionIdHash: Buffer, keyId: string): Promise<Reveal | undefined> {
  await dropExpired(db);
  return db
    .deleteFrom('key_reveals')
    .where('session_id_hash', '=', sessionIdHash)
    .where('key_id', '=', keyId)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['key', 'signing_secret'])
    .executeTakeFirst();
}
