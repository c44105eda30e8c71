import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { CALLBACKS_CHANNEL } from './delivery.js';

/**
 * Queues the submission's result for delivery once more, as a new delivery (new
 * delivery id, attempts from zero) to the key's current redirect URL (or the
 * submission's own callback target, when it named one), keeping the
 * earlier deliveries as history. Returns the new delivery id, or null when the
 * submission has no delivery to repeat or its key no longer has a redirect URL.
 */
export async function redeliver(db: Db, submissionId: string): Promise<string | null> {
  const { rows } = await sql<{ id: string }>`
    WITH last AS (
      SELECT d.submission_id, d.key_id, d.payload, d.url, d.method, d.format, s.callback IS NOT NULL AS own_target
      FROM callback_deliveries d JOIN submissions s ON s.id = d.submission_id
      WHERE d.submission_id = ${submissionId}
      ORDER BY d.created_at DESC LIMIT 1
    ),
    added AS (
      -- A submission that named its own target (Judge0's callback_url) goes there again.
      INSERT INTO callback_deliveries (submission_id, key_id, url, method, format, payload)
      SELECT last.submission_id, last.key_id, CASE WHEN last.own_target THEN last.url ELSE k.redirect_url END,
             last.method, last.format, last.payload
      FROM last JOIN api_keys k ON k.id = last.key_id
      WHERE last.own_target OR (k.redirect_url IS NOT NULL AND k.redirect_url <> '')
      RETURNING id
    )
    SELECT id::text, pg_notify(${CALLBACKS_CHANNEL}, id::text) FROM added
  `.execute(db);
  return rows[0]?.id ?? null;
}

export interface DeliveryRow {
  id: string;
  url: string;
  state: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

/** Every delivery of a submission, oldest first. */
export async function deliveriesOf(db: Db, submissionId: string): Promise<DeliveryRow[]> {
  const { rows } = await sql<DeliveryRow>`
    SELECT id::text, url, state, attempts, last_status, last_error,
           CASE WHEN state = 'pending' THEN run_at END AS next_attempt_at, created_at, delivered_at
    FROM callback_deliveries WHERE submission_id = ${submissionId}
    ORDER BY created_at, id
  `.execute(db);
  return rows;
}
