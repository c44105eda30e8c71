import { Readable } from 'node:stream';
import Type from 'typebox';
import { allGraded, csvHeader, csvRow, FilterError, gradedJson, listGraded, readFilter, type GradedLine } from '../../grading/list.js';
import { GRADING_LIMITS } from '../../limits.js';
import { UUID } from '../../util/uuid.js';
import { ApiError } from '../errors.js';
import { validate } from '../middleware/json-body.js';
import type { RouteDef } from '../route.js';

// GET /api/v2/submissions/: the calling account's submissions, newest first, a page at a
// time, filtered as the portal's list is (src/grading/list.ts: one query for both), as
// JSON, or every match (from ?after, at most GRADING_LIMITS.exportMaxRows) as CSV or
// JSON lines.

export const SubmissionListQuery = Type.Object(
  {
    problem: Type.Optional(Type.String({ description: "A stored problem's id: its runs only." })),
    key: Type.Optional(Type.String({ description: "An API key's id (as GET /api/usage/ names it): its runs only." })),
    verdict: Type.Optional(Type.String({ description: "A judged run's verdict (accepted, wrong_answer, …), or the status or state of a run not judged (success, compile_error, queued, …)." })),
    from: Type.Optional(Type.String({ description: 'Created at or after: a date (2026-12-01, from midnight UTC) or an RFC 3339 date and time.' })),
    to: Type.Optional(Type.String({ description: 'Created before: a date and time, or a date (that whole day included).' })),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,7}$', description: `Submissions on the page, 1 to ${GRADING_LIMITS.pageMax} (default ${GRADING_LIMITS.pageDefault}); for csv and jsonl, at most this many rows (default and most ${GRADING_LIMITS.exportMaxRows}).` })),
    after: Type.Optional(Type.String({ description: 'The id of the last submission of the previous page (the answer\'s next gives the whole address).' })),
    format: Type.Optional(Type.Enum(['json', 'csv', 'jsonl'], { description: 'json (default): a page; csv: one row per submission with a header row; jsonl: one JSON object per line.' })),
  },
  { additionalProperties: false },
);

const Line = Type.Object({
  id: Type.String({ format: 'uuid' }),
  created_at: Type.String({ format: 'date-time' }),
  key_id: Type.Union([Type.String(), Type.Null()]),
  key_prefix: Type.Union([Type.String(), Type.Null()]),
  compiler: Type.String(),
  mode: Type.String(),
  state: Type.String(),
  status: Type.Union([Type.String(), Type.Null()]),
  verdict: Type.Union([Type.String(), Type.Null()]),
  score: Type.Union([Type.Number(), Type.Null()]),
  time: Type.Union([Type.Number(), Type.Null()]),
  problem: Type.Union([Type.Object({ id: Type.String(), version: Type.Union([Type.Integer(), Type.Null()]), name: Type.Union([Type.String(), Type.Null()]) }), Type.Null()]),
});

const ListPage = Type.Object({
  submissions: Type.Array(Line),
  more: Type.Integer({ description: `Matching submissions after this page, counted up to ${10_000} (more_at_least then says so).` }),
  more_at_least: Type.Optional(Type.Boolean()),
  next: Type.Union([Type.String(), Type.Null()], { description: "The next page's address (this query with after set); null on the last." }),
});

const bad = (message: string) => new ApiError(400, 'invalid_request', message);

function limitOf(text: string | undefined, max: number, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > max) throw bad(`limit must be a whole number from 1 to ${max}`);
  return n;
}

export const submissionListRoute: RouteDef = {
  method: 'GET',
  path: '/api/v2/submissions/',
  operationId: 'listSubmissions',
  summary: "The calling account's submissions, newest first, filtered by problem, key, verdict and date; a page as JSON, or CSV, or JSON lines.",
  auth: 'key',
  query: SubmissionListQuery,
  responses: {
    200: { description: 'A page of submissions (format=json); with format=csv, text/csv; with format=jsonl, application/x-ndjson.', schema: ListPage },
  },
  errors: [400, 401, 403, 405, 406, 500],
  handler:
    ({ db }) =>
    async (ctx) => {
      const q = validate<{ limit?: string; after?: string; format?: 'json' | 'csv' | 'jsonl' }>(SubmissionListQuery, { ...ctx.query });
      let filter;
      try {
        filter = readFilter(q as Record<string, unknown>);
      } catch (err) {
        if (err instanceof FilterError) throw bad(err.message);
        throw err;
      }
      if (q.after !== undefined && !UUID.test(q.after)) throw bad('after must be the id of a listed submission');
      const accountId = ctx.state.auth!.accountId;
      const format = q.format ?? 'json';
      if (format !== 'json') {
        const max = limitOf(q.limit, GRADING_LIMITS.exportMaxRows, GRADING_LIMITS.exportMaxRows);
        const rows = allGraded(db, accountId, filter, { after: q.after, max });
        const render = format === 'csv' ? csvRow : (l: GradedLine) => `${JSON.stringify(gradedJson(l))}\n`;
        ctx.type = format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson';
        if (format === 'csv') ctx.set('Content-Disposition', 'attachment; filename="submissions.csv"');
        ctx.body = Readable.from(
          (async function* () {
            if (format === 'csv') yield csvHeader();
            for await (const l of rows) yield render(l);
          })(),
        );
        return;
      }
      const page = await listGraded(db, accountId, filter, { limit: limitOf(q.limit, GRADING_LIMITS.pageMax, GRADING_LIMITS.pageDefault), after: q.after });
      let next: string | null = null;
      if (page.next !== null) {
        const params = new URLSearchParams(ctx.querystring);
        params.set('after', page.next);
        next = `${ctx.path}?${params.toString()}`;
      }
      ctx.body = { submissions: page.items.map(gradedJson), more: page.more, ...(page.moreAtLeast ? { more_at_least: true } : {}), next };
    },
};
