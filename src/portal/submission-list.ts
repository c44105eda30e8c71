import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunOptions } from '../db/schema.js';

// The account's submissions as the portal lists them, newest first, and one
// submission of the account (another account's id reads as none).

export const PAGE_SIZE = 50;

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

export async function listSubmissions(db: Db, accountId: string, page: number): Promise<{ lines: SubmissionLine[]; more: boolean }> {
  const { rows } = await sql<SubmissionLine>`
    SELECT s.id, s.created_at, k.key_prefix, s.key_id::text AS key_id, s.compiler, s.mode, s.state,
           s.result->>'status' AS status, (s.result->>'time')::float8 AS time, d.state AS callback
      FROM submissions s
      LEFT JOIN api_keys k ON k.id = s.key_id
      LEFT JOIN LATERAL (SELECT state FROM callback_deliveries c WHERE c.submission_id = s.id
                          ORDER BY c.created_at DESC, c.id DESC LIMIT 1) d ON true
     WHERE s.account_id = ${accountId}
     ORDER BY s.created_at DESC, s.id DESC
     LIMIT ${PAGE_SIZE + 1} OFFSET ${(page - 1) * PAGE_SIZE}
  `.execute(db);
  return { lines: rows.slice(0, PAGE_SIZE), more: rows.length > PAGE_SIZE };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface SubmissionDetail extends SubmissionLine {
  code: string;
  input: string | null;
  tests: { input: string }[] | null;
  /** The program beyond its code (other files, main, args, compiler options…); null for code alone. */
  run_options: RunOptions | null;
  started_at: Date | null;
  finished_at: Date | null;
  app_name: string | null;
  redirect_url: string | null;
}

export async function findSubmission(db: Db, accountId: string, id: string): Promise<SubmissionDetail | undefined> {
  if (!UUID.test(id)) return undefined;
  const { rows } = await sql<SubmissionDetail>`
    SELECT s.id, s.created_at, s.started_at, s.finished_at, s.code, s.input, s.tests, s.run_options, k.key_prefix, s.key_id::text AS key_id, k.app_name, k.redirect_url,
           s.compiler, s.mode, s.state, s.result->>'status' AS status, (s.result->>'time')::float8 AS time, NULL AS callback
      FROM submissions s LEFT JOIN api_keys k ON k.id = s.key_id
     WHERE s.id = ${id} AND s.account_id = ${accountId}
  `.execute(db);
  return rows[0];
}
