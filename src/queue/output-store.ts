import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { OUTPUT_CHANNEL, type OutputMessage } from './output-channel.js';

// Live output of WebSocket runs is stored as it is notified (table submission_output,
// migration 0008), so an API host that missed notifications (its LISTEN connection
// dropped) replays the chunks it lacks, in order. Rows go a while after the run. Only
// the runner holding the run's claim writes it: one whose lease ran out (cut off from
// the database while another runner took the job over) has its late chunks refused.

/** How long chunks are kept after they were written: far beyond a run's end. */
const KEEP_MINUTES = 10;

/**
 * Stores one message and notifies it, in one statement (the notification leaves with the
 * commit), only while `runnerId` holds this attempt of the run. Returns false when it
 * does not: nothing was stored or notified.
 */
export async function publishOutput(db: Db, runnerId: string, attempt: number, m: OutputMessage): Promise<boolean> {
  const stream = 'end' in m ? null : m.s;
  const data = 'end' in m ? '' : m.d;
  const { rows } = await sql<{ held: number }>`
    WITH held AS (
      SELECT id FROM submissions WHERE id = ${m.i} AND locked_by = ${runnerId} AND state = 'running' AND attempts = ${attempt}
    ),
    stored AS (
      INSERT INTO submission_output (submission_id, seq, stream, data)
      SELECT id, ${m.n}, ${stream}, ${data} FROM held
      ON CONFLICT DO NOTHING
    )
    SELECT count(pg_notify(${OUTPUT_CHANNEL}, ${JSON.stringify(m)}))::int AS held FROM held
  `.execute(db);
  return rows[0]?.held === 1;
}

/** The stored messages of these submissions from sequence number `from` on, in order. */
export async function storedOutput(db: Db, ids: string[], from = 0): Promise<OutputMessage[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ i: string; n: number; s: 'stdout' | 'stderr' | null; d: string }>`
    SELECT submission_id::text AS i, seq AS n, stream AS s, data AS d FROM submission_output
     WHERE submission_id = ANY(${ids}::uuid[]) AND seq >= ${from}
     ORDER BY submission_id, seq
  `.execute(db);
  return rows.map((r) => (r.s === null ? { i: r.i, n: r.n, end: true as const } : { i: r.i, n: r.n, s: r.s, d: r.d }));
}

/** The stored messages of each run from its own sequence number on (polling without LISTEN), in order. */
export async function storedOutputFrom(db: Db, from: Map<string, number>): Promise<OutputMessage[]> {
  if (from.size === 0) return [];
  const { rows } = await sql<{ i: string; n: number; s: 'stdout' | 'stderr' | null; d: string }>`
    SELECT o.submission_id::text AS i, o.seq AS n, o.stream AS s, o.data AS d
      FROM unnest(${[...from.keys()]}::uuid[], ${[...from.values()]}::int[]) AS w(id, from_seq)
      JOIN submission_output o ON o.submission_id = w.id AND o.seq >= w.from_seq
     ORDER BY o.submission_id, o.seq
  `.execute(db);
  return rows.map((r) => (r.s === null ? { i: r.i, n: r.n, end: true as const } : { i: r.i, n: r.n, s: r.s, d: r.d }));
}

/** Drops chunks old enough that no one can still be waiting for them. */
export async function pruneOutput(db: Db): Promise<number> {
  const res = await sql`DELETE FROM submission_output WHERE created_at < now() - make_interval(mins => ${KEEP_MINUTES})`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
