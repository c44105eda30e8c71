import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/** Whether a run is queued and due, of an account other than `besides` when given: someone waits for a slot. */
export async function runsWaiting(db: Db, besides?: string): Promise<boolean> {
  const { rows } = await sql<{ waits: boolean }>`
    SELECT EXISTS (SELECT 1 FROM submissions s WHERE s.state = 'queued' AND s.run_at <= now()
                     ${besides === undefined ? sql`` : sql`AND s.account_id <> ${besides}`}) AS waits
  `.execute(db);
  return rows[0]!.waits;
}
