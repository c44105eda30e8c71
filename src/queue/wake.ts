import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Wake tokens (migration 0101): a listening runner's free slots it waits to fill, in
// runner_wakes, and the channel of its own that an admission notifies when it takes one
// of them (runbox_wake_one). The runner's claim statements set the count as they run
// (wakeCte), so waiting costs no statement; a runner that does not LISTEN has no row.

/** What a runner's claim statements keep its tokens at. */
export interface WakeTokens {
  runnerId: string;
  /** Its free slots besides the ones the statement is asked to fill. */
  freeBesides: number;
}

/** A runner's own wake channel: a valid identifier whatever its id is made of. */
export function wakeChannelOf(runnerId: string): string {
  return `runbox_wake_${createHash('sha256').update(runnerId).digest('hex').slice(0, 24)}`;
}

/** The runner's row, with no tokens yet (a runner listening on its channel from now on). */
export async function registerWakes(db: Db, runnerId: string): Promise<void> {
  await sql`INSERT INTO runner_wakes (runner_id, channel, slots) VALUES (${runnerId}, ${wakeChannelOf(runnerId)}, 0)
            ON CONFLICT (runner_id) DO UPDATE SET channel = excluded.channel, slots = 0`.execute(db);
}

/** The runner stops listening (a stop, or its LISTEN connection gone): admissions wake others. */
export async function dropWakes(db: Db, runnerId: string): Promise<void> {
  await sql`DELETE FROM runner_wakes WHERE runner_id = ${runnerId}`.execute(db);
}

/** Hands a wake the runner cannot use (its slots filled meanwhile) to another runner, or to all. */
export async function passWake(db: Db): Promise<void> {
  await sql`SELECT runbox_wake_one()`.execute(db);
}

/**
 * The `wake` CTE of a claim statement asked to fill `asked` slots: the runner's tokens
 * become its free slots once the statement's claims (`claimed`) are taken, written only
 * when they change (a claim that finds nothing and changes nothing writes nothing).
 */
export function wakeCte(tokens: WakeTokens, asked: number): RawBuilder<unknown> {
  const left = sql`(${tokens.freeBesides + asked} - (SELECT count(*) FROM claimed))::int`;
  return sql`
    wake AS (
      UPDATE runner_wakes SET slots = ${left}
      WHERE runner_id = ${tokens.runnerId} AND slots <> ${left}
      RETURNING 1
    )`;
}
