import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { OUTPUT_CHANNEL, type OutputBody, type OutputMessage } from './output-channel.js';

// Live output of WebSocket runs is stored as it is notified (table submission_output,
// migration 0008), so an API host that missed notifications (its LISTEN connection
// dropped) replays the chunks it lacks, in order; of a run taken over by another
// runner, the latest attempt's. Rows go a while after the run. Only
// the runner holding the run's claim writes it: one whose lease ran out (cut off from
// the database while another runner took the job over) has its late chunks refused.

/** How long chunks are kept after they were written: far beyond a run's end. */
const KEEP_MINUTES = 10;

/**
 * Stores one message and notifies it, in one statement (the notification leaves with the
 * commit), only while `runnerId` holds this attempt of the run. Returns false when it
 * does not: nothing was stored or notified.
 */
export async function publishOutput(db: Db, runnerId: string, attempt: number, body: OutputBody): Promise<boolean> {
  const m: OutputMessage = { ...body, a: attempt };
  const stream = 'end' in m ? null : m.s;
  const data = 'end' in m ? '' : m.d;
  const { rows } = await sql<{ held: number }>`
    WITH held AS (
      SELECT id FROM submissions WHERE id = ${m.i} AND locked_by = ${runnerId} AND state = 'running' AND attempts = ${attempt}
    ),
    stored AS (
      INSERT INTO submission_output (submission_id, attempt, seq, stream, data)
      SELECT id, ${attempt}, ${m.n}, ${stream}, ${data} FROM held
      ON CONFLICT DO NOTHING
    )
    SELECT count(pg_notify(${OUTPUT_CHANNEL}, ${JSON.stringify(m)}))::int AS held FROM held
  `.execute(db);
  return rows[0]?.held === 1;
}

/** Where a reader of a run's output stands: the next message it wants is this one of this attempt. */
export interface OutputPosition {
  attempt: number;
  seq: number;
}

type Row = { i: string; a: number; n: number; s: 'stdout' | 'stderr' | null; d: string };
const message = (r: Row): OutputMessage => (r.s === null ? { i: r.i, a: r.a, n: r.n, end: true as const } : { i: r.i, a: r.a, n: r.n, s: r.s, d: r.d });

/** Of each run, its latest stored attempt's chunks only: an earlier attempt's output is void. */
const latestAttempt = sql`o.attempt = (SELECT max(l.attempt) FROM submission_output l WHERE l.submission_id = o.submission_id)`;

/** The stored messages of these submissions' latest attempts, from `from` on, in order. */
export async function storedOutput(db: Db, ids: string[], from: OutputPosition = { attempt: 0, seq: 0 }): Promise<OutputMessage[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<Row>`
    SELECT o.submission_id::text AS i, o.attempt AS a, o.seq AS n, o.stream AS s, o.data AS d FROM submission_output o
     WHERE o.submission_id = ANY(${ids}::uuid[]) AND ${latestAttempt} AND (o.attempt, o.seq) >= (${from.attempt}::int, ${from.seq}::int)
     ORDER BY o.submission_id, o.seq
  `.execute(db);
  return rows.map(message);
}

/** The stored messages of each run's latest attempt from its own position on (polling without LISTEN), in order. */
export async function storedOutputFrom(db: Db, from: Map<string, OutputPosition>): Promise<OutputMessage[]> {
  if (from.size === 0) return [];
  const at = [...from.values()];
  const { rows } = await sql<Row>`
    SELECT o.submission_id::text AS i, o.attempt AS a, o.seq AS n, o.stream AS s, o.data AS d
      FROM unnest(${[...from.keys()]}::uuid[], ${at.map((p) => p.attempt)}::int[], ${at.map((p) => p.seq)}::int[]) AS w(id, from_attempt, from_seq)
      JOIN submission_output o ON o.submission_id = w.id AND (o.attempt, o.seq) >= (w.from_attempt, w.from_seq)
     WHERE ${latestAttempt}
     ORDER BY o.submission_id, o.seq
  `.execute(db);
  return rows.map(message);
}

/** Drops chunks old enough that no one can still be waiting for them. */
export async function pruneOutput(db: Db): Promise<number> {
  const res = await sql`DELETE FROM submission_output WHERE created_at < now() - make_interval(mins => ${KEEP_MINUTES})`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
