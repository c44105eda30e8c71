import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunOptions } from '../db/schema.js';
import { UUID } from '../util/uuid.js';

// One submission of the account as its portal page shows it (another account's id reads
// as none). The list is src/grading/list.ts.

export interface SubmissionLine {
  id: string;
  created_at: Date;
  key_prefix: string | null;
  key_id: string | null;
  compiler: string;
  mode: string;
  state: string;
  status: string | null;
  time: number | null;
  callback: string | null;
}

export interface SubmissionDetail extends SubmissionLine {
  code: string;
  input: string | null;
  tests: { input: string; name?: string }[] | null;
  /** The program beyond its code (other files, main, args, compiler options…); null for code alone. */
  run_options: RunOptions | null;
  started_at: Date | null;
  finished_at: Date | null;
  app_name: string | null;
  redirect_url: string | null;
  /** A stored problem's run: the problem, the version it ran, and the problem's name (null once deleted). */
  problem_id: string | null;
  problem_version: number | null;
  problem_name: string | null;
  verdict: string | null;
  score: number | null;
}

export async function findSubmission(db: Db, accountId: string, id: string): Promise<SubmissionDetail | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await sql<SubmissionDetail>`
    SELECT s.id, s.created_at, s.started_at, s.finished_at, s.code, s.input, s.tests, s.run_options, k.key_prefix, s.key_id::text AS key_id, k.app_name, k.redirect_url,
           s.compiler, s.mode, s.state, s.result->>'status' AS status, (s.result->>'time')::float8 AS time, NULL AS callback,
           s.result->>'verdict' AS verdict, (s.result->>'score')::float8 AS score,
           s.run_options->'judge'->'problem'->>'id' AS problem_id, (s.run_options->'judge'->'problem'->>'version')::int AS problem_version, p.name AS problem_name
      FROM submissions s LEFT JOIN api_keys k ON k.id = s.key_id
      LEFT JOIN problems p ON p.id::text = s.run_options->'judge'->'problem'->>'id' AND p.deleted_at IS NULL
     WHERE s.id = ${id} AND s.account_id = ${accountId}
  `.execute(db);
  return rows[0];
}
