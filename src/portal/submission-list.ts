import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunOptions } from '../db/schema.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import { UUID } from '../util/uuid.js';

// The account's submissions as the portal lists them, newest first, a page at a time,
// and one submission of the account (another account's id reads as none).

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

/** Counted only this far: an account's older submissions can be millions. */
export const MORE_COUNT_CAP = 10_000;

/** A page of the account's submissions, newest first, after the one named (its id), and how many more. */
export async function listSubmissions(db: Db, accountId: string, page: PageRequest): Promise<Page<SubmissionLine>> {
  const after = page.after !== undefined && UUID.test(page.after) ? page.after : null;
  // Keyset on (created_at, id), in the order of the (account_id, created_at) index.
  const older = (id: string | null) => sql`
    AND (${id}::uuid IS NULL OR (s.created_at, s.id) < (SELECT created_at, id FROM submissions WHERE id = ${id}::uuid AND account_id = ${accountId}))`;
  const { rows } = await sql<SubmissionLine>`
    SELECT s.id, s.created_at, k.key_prefix, s.key_id::text AS key_id, s.compiler, s.mode, s.state,
           s.result->>'status' AS status, (s.result->>'time')::float8 AS time, d.state AS callback
      FROM submissions s
      LEFT JOIN api_keys k ON k.id = s.key_id
      LEFT JOIN LATERAL (SELECT state FROM callback_deliveries c WHERE c.submission_id = s.id
                          ORDER BY c.created_at DESC, c.id DESC LIMIT 1) d ON true
     WHERE s.account_id = ${accountId} ${older(after)}
     ORDER BY s.created_at DESC, s.id DESC
     LIMIT ${page.limit ?? PAGE_SIZE}
  `.execute(db);
  const counted = await pageOf(rows, { ...page, limit: page.limit ?? PAGE_SIZE }, (l) => l.id, async (last) => {
    const { rows: n } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM submissions s WHERE s.account_id = ${accountId} ${older(last)} LIMIT ${MORE_COUNT_CAP + 1}) x
    `.execute(db);
    return n[0]!.n;
  });
  return counted.more > MORE_COUNT_CAP ? { ...counted, more: MORE_COUNT_CAP, moreAtLeast: true } : counted;
}

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
