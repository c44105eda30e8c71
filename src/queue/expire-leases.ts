import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

/**
 * Runners known to be dead (their process is gone): marked stopped, and the leases of
 * the jobs they held end now, so the reaper (reapExpired) requeues those jobs at once
 * instead of after RUNBOX_LEASE_SECONDS. One statement; returns the jobs affected.
 */
export async function expireLeasesOf(db: Db, runnerIds: string[]): Promise<string[]> {
  if (runnerIds.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    WITH dead AS (
      UPDATE runners SET stopped_at = coalesce(stopped_at, now()) WHERE id = ANY(${runnerIds}::text[]) RETURNING id
    )
    UPDATE submissions
    SET lease_expires_at = now() - interval '1 second'
    WHERE state = 'running' AND locked_by = ANY(${runnerIds}::text[]) AND (SELECT count(*) FROM dead) >= 0
    RETURNING id::text
  `.execute(db);
  return rows.map((r) => r.id);
}
