import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

export interface RunnerInfo {
  id: string;
  hostname: string;
  slots: number;
  /** How many of its slots one account may hold (claim's AccountShare). */
  accountSlots?: number;
  launcher: string;
  /** The runner's process id on its host: a later runner there can tell it is gone. */
  pid?: number;
  /** Compiler id → version this runner can run (its installed images); published for API hosts. */
  compilers?: Record<string, string>;
  /** Compiler id → the libraries installed with it (name → version), published with `compilers`. */
  libraries?: Record<string, Record<string, string>>;
}

/**
 * runners.compilers holds the compiler ids with their versions and, under this key, the
 * libraries of each id. No compiler id can take the key (ids start with [a-z0-9]), so an
 * API host of an earlier release, which looks up ids only, reads the column as before.
 */
export const LIBRARIES_KEY = '@libraries';

/** The column as written: id → version, plus LIBRARIES_KEY → id → name → version. */
export type PublishedCompilers = Record<string, string | Record<string, Record<string, string>>>;

function published(runner: RunnerInfo): PublishedCompilers | null {
  if (!runner.compilers) return null;
  return runner.libraries && Object.keys(runner.libraries).length ? { ...runner.compilers, [LIBRARIES_KEY]: runner.libraries } : runner.compilers;
}

/**
 * Extends the lease of every job `runner` holds and records that the runner is alive.
 * Returns the claims still held (job id and attempt): a run whose claim is missing was
 * taken away (its lease ran out and the job was requeued) and should be abandoned.
 * `running` ("<id>/<attempt>" of the runs the runner is busy with) limits the renewal
 * to those: a job whose outcome the runner gave up recording (the database stayed down
 * for twice the lease), or one claimed by an earlier process under the same runner id,
 * must not be kept alive by heart-beats; its lease runs out and the reaper requeues it.
 */
export async function heartbeat(
  db: Db,
  runner: RunnerInfo,
  leaseSeconds: number,
  running?: string[],
): Promise<{ id: string; attempt: number }[]> {
  const { rows } = await sql<{ id: string; attempt: number }>`
    WITH alive AS (
      INSERT INTO runners (id, hostname, slots, account_slots, launcher, compilers, pid, last_seen, stopped_at)
      VALUES (${runner.id}, ${runner.hostname}, ${runner.slots}, ${runner.accountSlots ?? null}::int, ${runner.launcher},
              ${runner.compilers ? JSON.stringify(published(runner)) : null}::jsonb, ${runner.pid ?? null}::int, now(), NULL)
      ON CONFLICT (id) DO UPDATE
      SET hostname = excluded.hostname, slots = excluded.slots, account_slots = excluded.account_slots, launcher = excluded.launcher, pid = coalesce(excluded.pid, runners.pid),
          compilers = coalesce(excluded.compilers, runners.compilers), last_seen = now(), stopped_at = NULL
      RETURNING id
    )
    UPDATE submissions
    SET lease_expires_at = now() + make_interval(secs => ${leaseSeconds})
    WHERE locked_by = ${runner.id} AND state = 'running'
      AND (${running === undefined} OR (id::text || '/' || attempts) = ANY(${running ?? []}::text[]))
    RETURNING id, attempts AS attempt
  `.execute(db);
  return rows;
}

/** Records a clean stop in the runners table. */
export async function markStopped(db: Db, runnerId: string): Promise<void> {
  await sql`UPDATE runners SET stopped_at = now(), last_seen = now() WHERE id = ${runnerId}`.execute(db);
}

/** The slots of the live runners (heart-beaten within `freshSeconds`, not stopped): how many runs the service holds at once. */
export async function liveRunnerSlots(db: Db, freshSeconds: number): Promise<number> {
  const { rows } = await sql<{ slots: number }>`
    SELECT coalesce(sum(slots), 0)::int AS slots FROM runners WHERE stopped_at IS NULL AND last_seen > now() - make_interval(secs => ${freshSeconds})
  `.execute(db);
  return rows[0]!.slots;
}
