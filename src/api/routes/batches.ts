import Type from 'typebox';
import { availabilityCache } from '../../compilers/deployment.js';
import { createBatch, getBatch, resultLines, type BatchRun, type FeedSettings } from '../../batches/store.js';
import { BATCH_LIMITS } from '../../limits.js';
import { ApiError } from '../errors.js';
import { JsonTextError, parseClientJson } from '../json-text.js';
import { admissionSettings, assertOffered, judgedProgram, rawExtraParams, requestJudging, requestProgram } from '../middleware/admission.js';
import { readRawBody, validate } from '../middleware/json-body.js';
import type { ApiContext, ApiDeps, RouteDef } from '../route.js';
import { RunCodeRequest } from '../schemas.js';
import { keyAsker } from '../../problems/feedback.js';

// Batches: many runs in one request (JSON lines, each a run request as run-code takes it),
// stored whole or not at all, admitted as the account's limits free up (queued behind the
// pending limit rather than refused), each billed as a run; the results come back as JSON
// lines in the order the runs ended, from any offset.

const JSONL = ['application/jsonl', 'application/x-ndjson', 'application/jsonlines'];

export const BatchView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  total: Type.Integer({ description: 'Runs in the batch.' }),
  admitted: Type.Integer({ description: 'Runs admitted so far (stored and counted), or refused for good.' }),
  done: Type.Integer({ description: 'Runs ended: the results to read.' }),
  state: Type.Enum(['running', 'done']),
  created_at: Type.String({ format: 'date-time' }),
});

export function feedSettings(deps: Pick<ApiDeps, 'config' | 'clock'>): FeedSettings {
  const { recipesDir, maxAttempts, runnerFreshSeconds } = admissionSettings(deps);
  return { recipesDir, maxAttempts, runnerFreshSeconds, now: () => deps.clock.now() };
}

/** The body's runs, each checked as run-code checks its body; the first bad line is a 400 naming it. */
async function readRuns(ctx: ApiContext, deps: ApiDeps, available: ReadonlySet<string>): Promise<BatchRun[]> {
  if (!ctx.request.is(JSONL)) throw new ApiError(400, 'unsupported_content_type', `Content-Type must be ${JSONL[0]}: one run request (JSON) per line`);
  const raw = await readRawBody(ctx, BATCH_LIMITS.bodyMaxBytes);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new ApiError(400, 'invalid_utf8', 'the body is not valid UTF-8');
  }
  const lines = text.split('\n').map((l, i) => ({ line: l.trim(), n: i + 1 })).filter((l) => l.line !== '');
  if (lines.length === 0) throw new ApiError(400, 'invalid_request', 'the body has no runs: one run request (JSON) per line');
  if (lines.length > BATCH_LIMITS.runsMax) throw new ApiError(400, 'too_many_runs', `a batch holds at most ${BATCH_LIMITS.runsMax} runs; this one has ${lines.length}`);
  const auth = ctx.state.auth!;
  const runs: BatchRun[] = [];
  for (const { line, n } of lines) {
    try {
      const body = validate<RunCodeRequest>(RunCodeRequest, parseClientJson(line, `line ${n}`));
      assertOffered(body.compiler, deps.config.RUNBOX_RECIPES_DIR, available);
      const program = requestProgram(body, body.compiler, deps.config.RUNBOX_RECIPES_DIR);
      const judging = await requestJudging(deps, auth.accountId, body);
      const { judgeCompilers, ...run } = judgedProgram(program, judging, body);
      for (const c of judgeCompilers ?? []) assertOffered(c, deps.config.RUNBOX_RECIPES_DIR, available, 'the checker or interactor');
      runs.push({ compiler: body.compiler, ...run, extraParams: body.extra_params ?? null, ...(body.extra_params !== undefined ? rawExtraParams(line) : {}) });
    } catch (err) {
      if (err instanceof ApiError) throw new ApiError(err.status, err.code, `line ${n}: ${err.message}`);
      if (err instanceof JsonTextError) throw new ApiError(400, err.code, err.message);
      throw err;
    }
  }
  return runs;
}

const idOf = (ctx: ApiContext) => String(ctx.params['id'] ?? '');

export const batchRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/api/v2/batches/',
    operationId: 'createBatch',
    summary: `Submit up to ${BATCH_LIMITS.runsMax.toLocaleString('en-US')} runs at once (JSON lines); they are admitted as the account's limits free up.`,
    description: [
      `The body (Content-Type ${JSONL[0]}): one run request per line, as POST /api/v2/run-code/ takes it (tests, expected outputs and checkers too).`,
      'Every line is checked before anything is stored: a bad one is a 400 naming its line, and nothing is stored or counted.',
      "The runs are admitted in their order as the account's pending and per-minute limits let them through (never refused for those), each counted and billed as a run;",
      'one refused for good (the monthly allowance used up) gets the refusal as its result. Answers 201 with the batch.',
    ].join(' '),
    auth: 'key',
    maintenance: true,
    otherBodies: Object.fromEntries(JSONL.map((t) => [t, { description: 'One run request (JSON) per line.', maxBytes: BATCH_LIMITS.bodyMaxBytes }])),
    responses: { 201: { description: 'The batch.', schema: BatchView } },
    errors: [400, 401, 403, 405, 406, 500, 503],
    handler: (deps) => {
      const available = availabilityCache(deps.db, deps.config);
      return async (ctx) => {
        const auth = ctx.state.auth!;
        const runs = await readRuns(ctx, deps, await available());
        const id = await createBatch(deps.db, auth.accountId, auth.keyId, runs);
        // Its first items go in at once, by this process's feeder.
        deps.batches?.kick();
        ctx.status = 201;
        ctx.set('Location', `/api/v2/batches/${id}`);
        ctx.body = await getBatch(deps.db, auth.accountId, id);
      };
    },
  },
  {
    method: 'GET',
    path: '/api/v2/batches/:id',
    operationId: 'getBatch',
    summary: "A batch's progress: runs admitted and ended.",
    auth: 'key',
    responses: { 200: { description: 'The batch.', schema: BatchView } },
    errors: [401, 403, 404, 405, 406, 500],
    handler: (deps) => async (ctx) => {
      const batch = await getBatch(deps.db, ctx.state.auth!.accountId, idOf(ctx));
      if (!batch) throw new ApiError(404, 'not_found', `no batch ${idOf(ctx)}`);
      ctx.body = batch;
    },
  },
  {
    method: 'GET',
    path: '/api/v2/batches/:id/results',
    operationId: 'getBatchResults',
    summary: 'The results as JSON lines, in the order the runs ended; streamed until the last, from ?offset=N on.',
    description: [
      'Each line: {"offset", "index" (the run\'s line in the batch, from 0), "submission_id", and "result" (as run-code-sync answers) or "error" {code, message} for a run refused for good}.',
      'offset counts lines from 1; a client that lost its connection asks again with ?offset= the last offset it read, and gets every later line once.',
      'The answer stays open, sending lines as runs end, until the batch is done.',
    ].join(' '),
    auth: 'key',
    responses: { 200: { description: 'JSON lines (application/jsonl).', contentType: 'text/plain' } },
    errors: [400, 401, 403, 404, 405, 406, 500],
    handler: (deps) => async (ctx) => {
      const auth = ctx.state.auth!;
      const id = idOf(ctx);
      const given = ctx.query['offset'];
      const offset = given === undefined ? 0 : Number(given);
      if (!Number.isInteger(offset) || offset < 0) throw new ApiError(400, 'invalid_request', 'offset must be a whole number, 0 or more');
      const batch = await getBatch(deps.db, auth.accountId, id);
      if (!batch) throw new ApiError(404, 'not_found', `no batch ${id}`);
      ctx.respond = false;
      const res = ctx.res;
      res.writeHead(200, { 'Content-Type': 'application/jsonl; charset=utf-8', 'Cache-Control': 'no-store' });
      let gone = false;
      res.once('close', () => (gone = true));
      let at = offset;
      while (!gone) {
        const { lines, last } = await resultLines(deps.db, id, keyAsker(auth), at, 500);
        at = last;
        if (lines.length > 0 && !res.write(lines.join('\n') + '\n')) await new Promise((r) => res.once('drain', r));
        if (at >= batch.total) break;
        if (lines.length === 0) await new Promise((r) => setTimeout(r, BATCH_LIMITS.resultsPollMs));
      }
      res.end();
    },
  },
];
