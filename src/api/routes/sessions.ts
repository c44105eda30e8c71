import { isUtf8 } from 'node:buffer';
import Type from 'typebox';
import { decodeBase64 } from '../../program/program.js';
import { SESSION_LIMITS } from '../../limits.js';
import { RunResultSchema } from '../../result.js';
import { SessionFileEntry, SessionFileSchema, SessionFileWrite, SessionOpenRequest, SessionRunRequest, SessionView } from '../../sessions/schemas.js';
import {
  beginRun,
  closeSession,
  deleteFile,
  endRun,
  getSession,
  listFiles,
  openSession,
  readFile,
  restartKernel,
  SessionRefusal,
  writeFile,
  type SessionRow,
} from '../../sessions/store.js';
import { ApiError } from '../errors.js';
import { storedResultJson, waitForRunEnd } from '../live.js';
import { keyAsker } from '../../problems/feedback.js';
import { assertOffered, requestProgram, runAdmitter } from '../middleware/admission.js';
import { availabilityCache } from '../../compilers/deployment.js';
import type { ApiContext, ApiDeps, RouteDef } from '../route.js';
import type { RunLimitsRequest } from '../../program/fields.js';
import { compilerEntry } from '../../compilers/catalogue.js';
import { kernelCommand, kernelInterpreter } from '../../sessions/kernel.js';

// Sessions: a workspace kept between runs (src/sessions). A run of a session is admitted
// as a run (every limit, counted and billed as one; refused as a synchronous run is when
// the account's slots are busy) and waited for; runs of one session go one at a time. An
// id not of the caller's account is a 404, as a missing one, so ids cannot be probed.

const SESSION_STATUS: Record<SessionRefusal['code'], number> = {
  not_found: 404,
  session_ended: 410,
  session_busy: 409,
  too_many_sessions: 429,
  invalid_request: 400,
  workspace_full: 400,
};

/** A session refusal as its API error. */
export function sessionError(err: unknown): unknown {
  return err instanceof SessionRefusal ? new ApiError(SESSION_STATUS[err.code], err.code, err.message) : err;
}

/** Runs `work`, a session refusal thrown as its API error. */
export async function refusals<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw sessionError(err);
  }
}

export function sessionView(s: SessionRow) {
  return {
    id: s.id,
    compiler: s.compiler,
    kind: s.kind,
    state: s.ended_at ? 'ended' : 'open',
    ending: s.ending,
    created_at: s.created_at.toISOString(),
    last_active_at: s.last_active_at.toISOString(),
    ended_at: s.ended_at ? s.ended_at.toISOString() : null,
    idle_timeout: s.idle_timeout_seconds,
    max_lifetime: s.max_lifetime_seconds,
    busy: s.busy,
    runs: s.runs,
    sandbox_seconds: Number(s.sandbox_ms) / 1000,
  };
}

const idOf = (ctx: ApiContext) => String(ctx.params['id'] ?? '');
const pathOf = (ctx: ApiContext) => String(ctx.params['path'] ?? '');

/** The file as an answer carries it: text when it is UTF-8 without NUL, else Base64. */
export function fileAnswer(path: string, file: { content: Buffer; mode: number }) {
  const text = isUtf8(file.content) && !file.content.includes(0);
  return { path, size: file.content.length, mode: file.mode, encoding: text ? 'utf-8' : 'base64', content: file.content.toString(text ? 'utf8' : 'base64') };
}

/** Opens a session for the caller (REST and MCP). */
export async function openForCaller(deps: ApiDeps, auth: NonNullable<ApiContext['state']['auth']>, body: SessionOpenRequest, available: () => Promise<ReadonlySet<string>>) {
  assertOffered(body.compiler, deps.config.RUNBOX_RECIPES_DIR, await available());
  // The limits are checked now as every run will read them (a broken one is a 400 naming it).
  if (body.limits) requestProgram({ code: '', limits: body.limits }, body.compiler, deps.config.RUNBOX_RECIPES_DIR);
  const kind = body.kind ?? 'files';
  if (kind === 'kernel' && !kernelOf(deps, body.compiler)) throw new ApiError(400, 'invalid_request', `compiler ${body.compiler} has no kernel: kernel sessions take a Python 3 compiler`);
  return refusals(() =>
    openSession(deps.db, {
      accountId: auth.accountId,
      keyId: auth.keyId,
      compiler: body.compiler,
      kind,
      runLimits: (body.limits ?? null) as never,
      idleTimeoutSeconds: body.idle_timeout,
      maxLifetimeSeconds: body.max_lifetime,
    }),
  );
}

/** The interpreter a kernel session's cells run with, or undefined when the compiler has none. */
function kernelOf(deps: ApiDeps, compiler: string): string | undefined {
  const entry = compilerEntry(compiler, deps.config.RUNBOX_RECIPES_DIR);
  return entry ? kernelInterpreter(entry) : undefined;
}

/**
 * Runs one request of a session and waits for its end: the stored result as JSON, or
 * null when the caller went away (the run was cancelled; it stays counted).
 */
export async function runForCaller(
  deps: ApiDeps,
  auth: NonNullable<ApiContext['state']['auth']>,
  id: string,
  body: SessionRunRequest,
  wait: (submission: { id: string; admittedAt: number }) => Promise<boolean>,
  state?: ApiContext['state'],
): Promise<string | null> {
  const given = [body.code, body.file, body.command, body.cell].filter((x) => x !== undefined).length;
  if (given !== 1) throw new ApiError(400, 'invalid_request', 'give exactly one of code, file and command (a files session) or cell (a kernel session)');
  const session = await refusals(() => beginRun(deps.db, auth.accountId, id));
  let counted = false;
  try {
    if ((session.kind === 'kernel') !== (body.cell !== undefined)) {
      throw new ApiError(400, 'invalid_request', session.kind === 'kernel' ? `session ${id} is a kernel session: its runs take cell` : `session ${id} is a files session: cell is for kernel sessions`);
    }
    let code = body.cell ?? body.code ?? '';
    if (body.file !== undefined) {
      const file = await refusals(() => readFile(deps.db, auth.accountId, id, body.file!));
      if (!file) throw new ApiError(400, 'invalid_request', `file ${body.file} is not in the workspace (GET /api/v2/sessions/${id}/files lists it)`);
      code = file.content.toString('utf8');
    }
    const limits = (session.run_limits ?? undefined) as RunLimitsRequest | undefined;
    const program = requestProgram(
      { code, ...(body.command || body.cell !== undefined ? {} : { args: body.args, compiler_options: body.compiler_options }), limits, return_files: body.return_files },
      session.compiler,
      deps.config.RUNBOX_RECIPES_DIR,
    );
    const interpreter = body.cell !== undefined ? kernelOf(deps, session.compiler) : undefined;
    if (body.cell !== undefined && !interpreter) throw new ApiError(400, 'invalid_request', `compiler ${session.compiler} has no kernel`);
    const how = interpreter
      ? { run: 'cell' as const, command: kernelCommand(interpreter) }
      : body.command
        ? { run: 'command' as const, command: body.command }
        : body.file !== undefined
          ? { run: 'file' as const, file: body.file }
          : { run: 'code' as const };
    const admitted = await runAdmitter(deps)(
      auth,
      { compiler: session.compiler, code: program.code, input: body.input ?? null, tests: null, extraParams: null, runOptions: { ...(program.runOptions ?? {}), session: { id, ...how } } },
      'sync',
      state,
    );
    counted = true;
    if (!(await wait(admitted))) return null;
    return await storedResultJson(deps.db, admitted.id, keyAsker(auth), {}, deps.live);
  } finally {
    await endRun(deps.db, id, counted);
  }
}

const errors = [400, 401, 403, 404, 405, 406, 409, 410, 500, 503];

export const sessionRoutes: RouteDef[] = [
  {
    method: 'POST',
    path: '/api/v2/sessions/',
    operationId: 'openSession',
    summary: 'Open a session: a workspace (/box) kept between its runs.',
    description: [
      "Answers 201 with the session. Counted against the plan's sessions at once (429 too_many_sessions past it) and session lifetime (max_lifetime above it is a 400).",
      'An idle session ends at its idle_timeout; every session at its max_lifetime. Its files are gone when it ends.',
    ].join(' '),
    auth: 'key',
    maintenance: true,
    body: SessionOpenRequest,
    responses: { 201: { description: 'The session.', schema: SessionView } },
    errors: [400, 401, 403, 405, 406, 429, 500, 503],
    handler: (deps) => {
      const available = availabilityCache(deps.db, deps.config);
      return async (ctx) => {
        const session = await openForCaller(deps, ctx.state.auth!, ctx.state.body as SessionOpenRequest, available);
        ctx.status = 201;
        ctx.set('Location', `/api/v2/sessions/${session.id}`);
        ctx.body = sessionView(session);
      };
    },
  },
  {
    method: 'GET',
    path: '/api/v2/sessions/:id',
    operationId: 'getSession',
    summary: 'A session of the calling account: open or ended (and why), its runs and sandbox time.',
    auth: 'key',
    responses: { 200: { description: 'The session.', schema: SessionView } },
    errors: [401, 403, 404, 405, 406, 500],
    handler: (deps) => async (ctx) => {
      const session = await getSession(deps.db, ctx.state.auth!.accountId, idOf(ctx));
      if (!session) throw new ApiError(404, 'not_found', `no session ${idOf(ctx)}`);
      ctx.body = sessionView(session);
    },
  },
  {
    method: 'DELETE',
    path: '/api/v2/sessions/:id',
    operationId: 'closeSession',
    summary: 'End a session; its files are gone.',
    auth: 'key',
    responses: { 200: { description: 'The session, ended.', schema: SessionView } },
    errors,
    handler: (deps) => async (ctx) => {
      ctx.body = sessionView(await refusals(() => closeSession(deps.db, ctx.state.auth!.accountId, idOf(ctx))));
    },
  },
  {
    method: 'POST',
    path: '/api/v2/sessions/:id/restart',
    operationId: 'restartSessionKernel',
    summary: "Restart a kernel session: its variables, imports and definitions are gone; the workspace's files stay.",
    description: '400 invalid_request for a files session; 409 session_busy while a cell runs.',
    auth: 'key',
    maintenance: true,
    responses: { 200: { description: 'The session.', schema: SessionView } },
    errors,
    handler: (deps) => async (ctx) => {
      ctx.body = sessionView(await refusals(() => restartKernel(deps.db, ctx.state.auth!.accountId, idOf(ctx))));
    },
  },
  {
    method: 'POST',
    path: '/api/v2/sessions/:id/runs',
    operationId: 'runInSession',
    summary: 'Run code, a file of the workspace or a command in it; answers with the result.',
    description: [
      'Exactly one of code, file and command, or for a kernel session cell (its result has kernel: the last expression\'s value, figures, the error, what was not kept). Each run is a fresh sandbox with the workspace in /box; the regular files it leaves there are the workspace of the next run.',
      "Admitted and billed as a synchronous run (429 as run-code-sync: too_many_running, capacity, ...). 409 session_busy while another run of the session is under way; 410 session_ended.",
    ].join(' '),
    auth: 'key',
    rateLimitHeaders: true,
    maintenance: true,
    body: SessionRunRequest,
    responses: { 200: { description: 'The result.', schema: RunResultSchema } },
    errors: [...errors, 429],
    handler: (deps) => async (ctx) => {
      const live = deps.live;
      if (!live) throw new ApiError(500, 'internal_error', 'session runs are not available on this API process');
      const json = await runForCaller(deps, ctx.state.auth!, idOf(ctx), ctx.state.body as SessionRunRequest, (s) => waitForRunEnd(ctx.res, live, s.id, deps.db, deps.log, s.admittedAt), ctx.state);
      if (json === null) {
        ctx.respond = false;
        return;
      }
      ctx.type = 'application/json';
      ctx.body = json;
    },
  },
  {
    method: 'GET',
    path: '/api/v2/sessions/:id/files/',
    operationId: 'listSessionFiles',
    summary: "The workspace's files: path, size and mode of each.",
    auth: 'key',
    responses: { 200: { description: 'The files, by path.', schema: Type.Object({ files: Type.Array(SessionFileEntry) }) } },
    errors,
    handler: (deps) => async (ctx) => {
      ctx.body = { files: await refusals(() => listFiles(deps.db, ctx.state.auth!.accountId, idOf(ctx))) };
    },
  },
  {
    method: 'GET',
    path: '/api/v2/sessions/:id/files/{*path}',
    operationId: 'readSessionFile',
    summary: 'A file of the workspace: its content as text, or Base64.',
    auth: 'key',
    responses: { 200: { description: 'The file.', schema: SessionFileSchema } },
    errors,
    handler: (deps) => async (ctx) => {
      const path = pathOf(ctx);
      const file = await refusals(() => readFile(deps.db, ctx.state.auth!.accountId, idOf(ctx), path));
      if (!file) throw new ApiError(404, 'not_found', `no file ${path} in the workspace`);
      ctx.body = fileAnswer(path, file);
    },
  },
  {
    method: 'PUT',
    path: '/api/v2/sessions/:id/files/{*path}',
    operationId: 'writeSessionFile',
    summary: 'Write a file of the workspace (its directories are implied).',
    description: 'The path: relative, segments of letters, digits and . _ + -, no .. and not under out/. 409 session_busy while a run is under way.',
    auth: 'key',
    maintenance: true,
    body: SessionFileWrite,
    // Base64 of the largest file, and room for the rest of the body.
    bodyMaxBytes: Math.ceil((SESSION_LIMITS.fileBytes * 4) / 3) + 4096,
    responses: { 200: { description: 'Written.', schema: SessionFileEntry } },
    errors,
    handler: (deps) => async (ctx) => {
      const path = pathOf(ctx);
      const body = ctx.state.body as SessionFileWrite;
      const content = body.encoding === 'base64' ? decodeBase64(body.content) : Buffer.from(body.content, 'utf8');
      if (!content) throw new ApiError(400, 'invalid_request', 'content is not Base64 (padded, without line breaks)');
      const mode = body.executable ? 0o755 : 0o644;
      await refusals(() => writeFile(deps.db, ctx.state.auth!.accountId, idOf(ctx), path, content, mode));
      ctx.body = { path, size: content.length, mode };
    },
  },
  {
    method: 'DELETE',
    path: '/api/v2/sessions/:id/files/{*path}',
    operationId: 'deleteSessionFile',
    summary: 'Delete a file of the workspace, or a directory and everything below it.',
    auth: 'key',
    maintenance: true,
    responses: { 204: { description: 'Deleted.' } },
    errors,
    handler: (deps) => async (ctx) => {
      const path = pathOf(ctx);
      if (!(await refusals(() => deleteFile(deps.db, ctx.state.auth!.accountId, idOf(ctx), path)))) throw new ApiError(404, 'not_found', `no file ${path} in the workspace`);
      ctx.status = 204;
    },
  },
];
