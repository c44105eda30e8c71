import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { TEST_DATA_LOCK } from '../db/locks.js';

// What stored problems no longer need goes: a version replaced by a newer one, or every
// version of a deleted problem, once no queued or running submission names it (a run
// admitted before the change still finds its data); then the test data no test points
// at. Run after each problem write for the account, and periodically for all (a run
// that held a version may have ended since).

/**
 * Removes the versions (and their tests) no one needs any more, for one account or all;
 * returns the hashes their tests held, for collectTestData. Deleted problems left
 * without a version go too.
 */
export async function sweepVersions(trx: Db, accountId?: string): Promise<Buffer[]> {
  const account = accountId === undefined ? sql`true` : sql`p.account_id = ${accountId}`;
  const { rows } = await sql<{ input_hash: Buffer; answer_hash: Buffer }>`
    WITH dead AS (
      SELECT v.problem_id, v.version FROM problem_versions v JOIN problems p ON p.id = v.problem_id
      WHERE ${account} AND (v.version < p.version OR p.deleted_at IS NOT NULL)
        AND NOT EXISTS (
          SELECT 1 FROM submissions s
          WHERE s.account_id = p.account_id AND s.state IN ('queued', 'running')
            AND s.run_options->'judge'->'problem'->>'id' = v.problem_id::text
            AND (s.run_options->'judge'->'problem'->>'version')::int = v.version)
    ),
    tests AS (
      DELETE FROM problem_tests t USING dead d WHERE t.problem_id = d.problem_id AND t.version = d.version
      RETURNING t.input_hash, t.answer_hash
    ),
    submitted AS (
      DELETE FROM problem_submission_files f USING dead d WHERE f.problem_id = d.problem_id AND f.version = d.version
      RETURNING f.hash
    ),
    versions AS (
      DELETE FROM problem_versions v USING dead d WHERE v.problem_id = d.problem_id AND v.version = d.version
        AND (SELECT count(*) FROM tests) >= 0 AND (SELECT count(*) FROM submitted) >= 0
      RETURNING v.problem_id
    )
    SELECT input_hash, answer_hash FROM tests UNION ALL SELECT hash, hash FROM submitted
  `.execute(trx);
  await sql`
    DELETE FROM problems p WHERE p.deleted_at IS NOT NULL AND ${account}
      AND NOT EXISTS (SELECT 1 FROM problem_versions v WHERE v.problem_id = p.id)
  `.execute(trx);
  const hashes = new Map<string, Buffer>();
  for (const r of rows) for (const h of [r.input_hash, r.answer_hash]) hashes.set(h.toString('hex'), h);
  return [...hashes.values()];
}

/** Deletes test data no test points at: of `candidates`, or all of it when none are given. */
export async function collectTestData(db: Db, candidates?: Buffer[]): Promise<number> {
  if (candidates && candidates.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${TEST_DATA_LOCK.class}, ${TEST_DATA_LOCK.key})`.execute(trx);
    const which = candidates ? sql`d.hash = ANY(${candidates})` : sql`true`;
    const { rows } = await sql<{ n: number }>`
      WITH gone AS (
        DELETE FROM test_data d WHERE ${which}
          AND NOT EXISTS (SELECT 1 FROM problem_tests t WHERE t.input_hash = d.hash)
          AND NOT EXISTS (SELECT 1 FROM problem_tests t WHERE t.answer_hash = d.hash)
          AND NOT EXISTS (SELECT 1 FROM problem_submission_files f WHERE f.hash = d.hash)
        RETURNING 1
      ) SELECT count(*)::int AS n FROM gone
    `.execute(trx);
    return rows[0]?.n ?? 0;
  });
}

/** The periodic sweep: every account's unneeded versions, then every unreferenced file. */
export async function sweepProblems(db: Db): Promise<{ files: number }> {
  await db.transaction().execute((trx) => sweepVersions(trx));
  return { files: await collectTestData(db) };
}
