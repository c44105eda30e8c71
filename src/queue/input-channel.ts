import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Input of interactive runs, from the API host to the runner host through Postgres: each
// chunk the caller types is stored (table submission_input, migration 0014) and notified
// on INPUT_CHANNEL in one statement, numbered per submission from 0, and a last message
// with `eof` closes the program's stdin. The runner puts them back in order and reads
// what it missed from the table (input sent before the job started, or while its LISTEN
// connection was down). Payloads stay under Postgres's 8000-byte NOTIFY limit.

export const INPUT_CHANNEL = 'runbox_input';

export type InputMessage = { i: string; n: number; d: string } | { i: string; n: number; eof: true };

/** UTF-16 units per chunk (as OUTPUT_CHUNK_UNITS): at most 6000 bytes once JSON-escaped. */
export const INPUT_CHUNK_UNITS = 1000;

/** How long input is kept after it was written: far beyond a run's end. */
const KEEP_MINUTES = 10;

export function parseInputMessage(payload: string): InputMessage | null {
  try {
    const m = JSON.parse(payload) as Record<string, unknown>;
    if (typeof m.i !== 'string' || typeof m.n !== 'number' || !Number.isInteger(m.n) || m.n < 0) return null;
    if (m.eof === true) return { i: m.i, n: m.n, eof: true };
    if (typeof m.d === 'string') return { i: m.i, n: m.n, d: m.d };
    return null;
  } catch {
    return null;
  }
}

/** Stores one message and notifies it, in one statement (the notification leaves with the commit). */
export async function publishInput(db: Db, m: InputMessage): Promise<void> {
  const eof = 'eof' in m;
  await sql`
    WITH stored AS (
      INSERT INTO submission_input (submission_id, seq, data, eof) VALUES (${m.i}, ${m.n}, ${eof ? '' : m.d}, ${eof})
      ON CONFLICT DO NOTHING
    )
    SELECT pg_notify(${INPUT_CHANNEL}, ${JSON.stringify(m)})
  `.execute(db);
}

/** The stored input of a submission from sequence number `from` on, in order. */
export async function storedInput(db: Db, id: string, from = 0): Promise<InputMessage[]> {
  const { rows } = await sql<{ n: number; d: string; eof: boolean }>`
    SELECT seq AS n, data AS d, eof FROM submission_input WHERE submission_id = ${id}::uuid AND seq >= ${from} ORDER BY seq
  `.execute(db);
  return rows.map((r) => (r.eof ? { i: id, n: r.n, eof: true as const } : { i: id, n: r.n, d: r.d }));
}

/** Drops input old enough that no run can still be reading it. */
export async function pruneInput(db: Db): Promise<number> {
  const res = await sql`DELETE FROM submission_input WHERE created_at < now() - make_interval(mins => ${KEEP_MINUTES})`.execute(db);
  return Number(res.numAffectedRows ?? 0);
}
