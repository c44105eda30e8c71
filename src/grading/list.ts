import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import { UUID } from '../util/uuid.js';

// An account's submissions as a teacher grades them: newest first, a page at a time,
// filtered by problem, key, outcome and date, each with its verdict, score and problem.
// The portal's Submissions page, a problem's page, the CSV export and
// GET /api/v2/submissions/ all read this one query.

export interface GradedLine {
  id: string;
  created_at: Date;
  key_id: string | null;
  key_prefix: string | null;
  compiler: string;
  mode: string;
  state: string;
  /** The run's status once it ended (success, runtime_error, …). */
  status: string | null;
  /** A judged run's verdict (accepted, wrong_answer, …); null for a run that was not judged. */
  verdict: string | null;
  /** A judged run's score, 0 to 1. */
  score: number | null;
  /** CPU seconds. */
  time: number | null;
  problem_id: string | null;
  problem_version: number | null;
  /** The problem's current name; null when not a problem's run or the problem is deleted. */
  problem_name: string | null;
  /** The latest callback delivery's state. */
  callback: string | null;
}

export interface SubmissionFilter {
  /** A stored problem's id. */
  problem?: string | undefined;
  /** An API key's id. */
  key?: string | undefined;
  /** The verdict of a judged run, or the status (or state) of one that was not judged. */
  verdict?: string | undefined;
  /** Created at or after. */
  from?: Date | undefined;
  /** Created before. */
  to?: Date | undefined;
}

/** What filters say wrong, in the words of the field. */
export class FilterError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})$/;
const OUTCOME = /^[a-z_]{1,40}$/;

/**
 * Filters from a query's text (the portal's form, the API's query): empty fields are no
 * filter; a date alone is that whole day in UTC (`to` includes it). Throws FilterError.
 */
export function readFilter(q: Record<string, unknown>): SubmissionFilter {
  const text = (name: string): string | undefined => {
    const v = q[name];
    const s = Array.isArray(v) ? v[0] : v;
    return typeof s === 'string' && s.trim() !== '' ? s.trim() : undefined;
  };
  const f: SubmissionFilter = {};
  const problem = text('problem');
  if (problem !== undefined) {
    if (!UUID.test(problem)) throw new FilterError('problem', 'problem must be a problem id (a UUID)');
    f.problem = problem.toLowerCase();
  }
  const key = text('key');
  if (key !== undefined) {
    if (!/^\d{1,18}$/.test(key)) throw new FilterError('key', 'key must be a key id (a whole number)');
    f.key = key;
  }
  const verdict = text('verdict');
  if (verdict !== undefined) {
    if (!OUTCOME.test(verdict)) throw new FilterError('verdict', 'verdict must be a verdict or status such as accepted or wrong_answer');
    f.verdict = verdict;
  }
  for (const name of ['from', 'to'] as const) {
    const v = text(name);
    if (v === undefined) continue;
    const date = DATE.test(v) ? new Date(`${v}T00:00:00Z`) : DATE_TIME.test(v) ? new Date(v) : null;
    if (date === null || Number.isNaN(date.getTime())) throw new FilterError(name, `${name} must be a date (2026-12-01) or a date and time (2026-12-01T09:00:00Z)`);
    // A day alone as `to` takes the whole of that day.
    f[name] = name === 'to' && DATE.test(v) ? new Date(date.getTime() + 86_400_000) : date;
  }
  return f;
}

/** The filter as query parameters (for the next page's link and the export's), without empties. */
export function filterParams(f: SubmissionFilter, raw: Record<string, unknown>): URLSearchParams {
  const params = new URLSearchParams();
  for (const name of ['problem', 'key', 'verdict', 'from', 'to'] as const) {
    if (f[name] === undefined) continue;
    const v = raw[name];
    params.set(name, String(Array.isArray(v) ? v[0] : v).trim());
  }
  return params;
}

/** Counted only this far: an account's older submissions can be millions. */
export const MORE_COUNT_CAP = 10_000;

const problemId = sql`(s.run_options->'judge'->'problem'->>'id')`;

function where(accountId: string, f: SubmissionFilter) {
  return sql`s.account_id = ${accountId}
    ${f.problem !== undefined ? sql`AND s.run_options->'judge'->'problem' IS NOT NULL AND ${problemId} = ${f.problem}` : sql``}
    ${f.key !== undefined ? sql`AND s.key_id = ${f.key}` : sql``}
    ${f.verdict !== undefined ? sql`AND coalesce(s.result->>'verdict', s.result->>'status', s.state) = ${f.verdict}` : sql``}
    ${f.from !== undefined ? sql`AND s.created_at >= ${f.from}` : sql``}
    ${f.to !== undefined ? sql`AND s.created_at < ${f.to}` : sql``}`;
}

// Keyset on (created_at, id), in the order of the (account_id, created_at) index.
const olderThan = (accountId: string, id: string | null) => sql`
  AND (${id}::uuid IS NULL OR (s.created_at, s.id) < (SELECT created_at, id FROM submissions WHERE id = ${id}::uuid AND account_id = ${accountId}))`;

/** A page of the account's submissions matching the filter, newest first, after the one named (its id), and how many more. */
export async function listGraded(db: Db, accountId: string, filter: SubmissionFilter, page: PageRequest & { limit: number }, opts: { count?: boolean } = {}): Promise<Page<GradedLine>> {
  const after = page.after !== undefined && UUID.test(page.after) ? page.after : null;
  const { rows } = await sql<GradedLine>`
    SELECT s.id, s.created_at, s.key_id::text AS key_id, k.key_prefix, s.compiler, s.mode, s.state,
           s.result->>'status' AS status, s.result->>'verdict' AS verdict, (s.result->>'score')::float8 AS score,
           (s.result->>'time')::float8 AS time, ${problemId} AS problem_id,
           (s.run_options->'judge'->'problem'->>'version')::int AS problem_version, p.name AS problem_name, d.state AS callback
      FROM submissions s
      LEFT JOIN api_keys k ON k.id = s.key_id
      LEFT JOIN problems p ON p.id::text = ${problemId} AND p.deleted_at IS NULL
      LEFT JOIN LATERAL (SELECT state FROM callback_deliveries c WHERE c.submission_id = s.id
                          ORDER BY c.created_at DESC, c.id DESC LIMIT 1) d ON true
     WHERE ${where(accountId, filter)} ${olderThan(accountId, after)}
     ORDER BY s.created_at DESC, s.id DESC
     LIMIT ${page.limit}
  `.execute(db);
  const counted = await pageOf(rows, page, (l) => l.id, async (last) => {
    // Not counted (an export reading on): a full page may have more after it.
    if (opts.count === false) return 1;
    const { rows: n } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (SELECT 1 FROM submissions s WHERE ${where(accountId, filter)} ${olderThan(accountId, last)} LIMIT ${MORE_COUNT_CAP + 1}) x
    `.execute(db);
    return n[0]!.n;
  });
  return counted.more > MORE_COUNT_CAP ? { ...counted, more: MORE_COUNT_CAP, moreAtLeast: true } : counted;
}

/** The matching submissions after the one named, newest first, at most `max`, read a batch at a time (an export streams them without holding them all). */
export async function* allGraded(db: Db, accountId: string, filter: SubmissionFilter, opts: { after?: string | undefined; max: number }, batch = 500): AsyncGenerator<GradedLine> {
  let after = opts.after;
  let left = opts.max;
  while (left > 0) {
    const page = await listGraded(db, accountId, filter, { limit: Math.min(batch, left), after }, { count: false });
    yield* page.items;
    left -= page.items.length;
    if (page.next === null) return;
    after = page.next;
  }
}

/** What a grader reads of a submission: its outcome (the verdict of a judged run, else its status or state). */
export const outcomeOf = (l: Pick<GradedLine, 'verdict' | 'status' | 'state'>): string => l.verdict ?? l.status ?? l.state;

/** A line as the API answers it (JSON and JSON lines): ISO times, the problem as an object. */
export function gradedJson(l: GradedLine) {
  return {
    id: l.id,
    created_at: new Date(l.created_at).toISOString(),
    key_id: l.key_id,
    key_prefix: l.key_prefix,
    compiler: l.compiler,
    mode: l.mode,
    state: l.state,
    status: l.status,
    verdict: l.verdict,
    score: l.score,
    time: l.time,
    problem: l.problem_id !== null ? { id: l.problem_id, version: l.problem_version, name: l.problem_name } : null,
  };
}

export const CSV_COLUMNS = ['id', 'created_at', 'problem_id', 'problem_name', 'problem_version', 'key_id', 'key_prefix', 'compiler', 'mode', 'state', 'verdict', 'score', 'time'] as const;

/** A CSV field (RFC 4180); a leading =, +, - or @ is quoted after a ' so a spreadsheet reads text, not a formula. */
function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  let s = v instanceof Date ? v.toISOString() : String(v);
  if (/^[=+\-@\t\r]/.test(s) && typeof v === 'string') s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

export const csvHeader = (): string => `${CSV_COLUMNS.join(',')}\r\n`;

/** One submission as a CSV row (the verdict column is its outcome: a run not judged gives its status). */
export function csvRow(l: GradedLine): string {
  const row: Record<(typeof CSV_COLUMNS)[number], unknown> = {
    id: l.id,
    created_at: new Date(l.created_at),
    problem_id: l.problem_id,
    problem_name: l.problem_name,
    problem_version: l.problem_version,
    key_id: l.key_id,
    key_prefix: l.key_prefix,
    compiler: l.compiler,
    mode: l.mode,
    state: l.state,
    verdict: outcomeOf(l),
    score: l.score,
    time: l.time,
  };
  return `${CSV_COLUMNS.map((c) => csvField(row[c])).join(',')}\r\n`;
}
