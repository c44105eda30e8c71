import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { StageLimits } from '../db/schema.js';
import { SESSION_LIMITS } from '../limits.js';
import { pathProblem } from '../program/paths.js';
import type { StageFile } from '../sandbox/spec.js';
import { UUID } from '../util/uuid.js';

// Sessions and their workspaces, as stored. A session's workspace is its files in the
// database: each run starts a fresh sandbox with them in /box and leaves the regular files
// it finds there when the program ends (symlinks, devices and the like never come back, so
// nothing a program plants can point outside its workspace later). Every look-up is by the
// session's id and its account's: another account's session is not found, as a missing one.

export type SessionEnding = 'closed' | 'idle_timeout' | 'max_lifetime';

export interface SessionRow {
  id: string;
  account_id: string;
  compiler: string;
  kind: 'files' | 'kernel';
  run_limits: StageLimits | null;
  idle_timeout_seconds: number;
  max_lifetime_seconds: number;
  created_at: Date;
  last_active_at: Date;
  busy: boolean;
  runs: number;
  sandbox_ms: string;
  ended_at: Date | null;
  ending: SessionEnding | null;
}

/** Why a session cannot be used: refusals a route turns into its answer. */
export class SessionRefusal extends Error {
  constructor(
    readonly code: 'not_found' | 'session_ended' | 'session_busy' | 'too_many_sessions' | 'invalid_request' | 'workspace_full',
    message: string,
  ) {
    super(message);
  }
}

const COLUMNS = sql`id, account_id::text, compiler, kind, run_limits, idle_timeout_seconds, max_lifetime_seconds, created_at, last_active_at,
  (busy_until IS NOT NULL AND busy_until > now()) AS busy, runs, sandbox_ms::text, ended_at, ending`;

/** Ends the sessions past their idle timeout or lifetime (of one account, or all), a run under way excepted; their files go. */
export async function endDueSessions(db: Db, accountId?: string): Promise<number> {
  const { rows } = await sql<{ id: string }>`
    WITH due AS (
      UPDATE run_sessions SET ended_at = now(),
        ending = CASE WHEN created_at + make_interval(secs => max_lifetime_seconds) <= now() THEN 'max_lifetime' ELSE 'idle_timeout' END
      WHERE ended_at IS NULL ${accountId === undefined ? sql`` : sql`AND account_id = ${accountId}`}
        AND (busy_until IS NULL OR busy_until <= now())
        AND (last_active_at + make_interval(secs => idle_timeout_seconds) <= now()
             OR created_at + make_interval(secs => max_lifetime_seconds) <= now())
      RETURNING id
    ), gone AS (DELETE FROM run_session_files f USING due WHERE f.session_id = due.id)
    SELECT id FROM due`.execute(db);
  return rows.length;
}

export interface OpenRequest {
  accountId: string;
  keyId: string | null;
  compiler: string;
  kind: 'files' | 'kernel';
  runLimits: StageLimits | null;
  idleTimeoutSeconds?: number | undefined;
  maxLifetimeSeconds?: number | undefined;
}

/** Opens a session within the plan's sessions at once and lifetime, counted under the account's row lock. */
export async function openSession(db: Db, req: OpenRequest): Promise<SessionRow> {
  await endDueSessions(db, req.accountId);
  return db.transaction().execute(async (trx) => {
    const { rows: plans } = await sql<{ at_once: number; lifetime: number; open: number }>`
      SELECT p.sessions_at_once AS at_once, p.session_lifetime_seconds AS lifetime,
             (SELECT count(*) FROM run_sessions s WHERE s.account_id = a.id AND s.ended_at IS NULL)::int AS open
      FROM accounts a JOIN plans p ON p.name = a.plan WHERE a.id = ${req.accountId} FOR UPDATE OF a`.execute(trx);
    const plan = plans[0];
    if (!plan) throw new SessionRefusal('not_found', 'no such account');
    const lifetime = req.maxLifetimeSeconds ?? Math.min(SESSION_LIMITS.lifetimeDefaultSeconds, plan.lifetime);
    if (lifetime > plan.lifetime) throw new SessionRefusal('invalid_request', `max_lifetime must be at most ${plan.lifetime} seconds (the plan's session lifetime)`);
    if (plan.open >= plan.at_once) {
      throw new SessionRefusal('too_many_sessions', `the account has ${plan.open} open sessions, its plan's limit (${plan.at_once}); close one (DELETE /api/v2/sessions/{id}) first`);
    }
    const { rows } = await sql<SessionRow>`
      INSERT INTO run_sessions (account_id, key_id, compiler, kind, run_limits, idle_timeout_seconds, max_lifetime_seconds)
      VALUES (${req.accountId}, ${req.keyId}, ${req.compiler}, ${req.kind}, ${req.runLimits === null ? null : JSON.stringify(req.runLimits)}::jsonb,
              ${req.idleTimeoutSeconds ?? SESSION_LIMITS.idleTimeoutDefaultSeconds}, ${lifetime})
      RETURNING ${COLUMNS}`.execute(trx);
    return rows[0]!;
  });
}

/** The account's session (ended ones too, with their ending), or undefined. */
export async function getSession(db: Db, accountId: string, id: string): Promise<SessionRow | undefined> {
  if (!UUID.test(id)) return undefined;
  await endDueSessions(db, accountId);
  const { rows } = await sql<SessionRow>`SELECT ${COLUMNS} FROM run_sessions WHERE id = ${id} AND account_id = ${accountId}`.execute(db);
  return rows[0];
}

/** The account's open session, or the refusal that says why it cannot be used. */
export async function openSessionOf(db: Db, accountId: string, id: string): Promise<SessionRow> {
  const session = await getSession(db, accountId, id);
  if (!session) throw new SessionRefusal('not_found', `no session ${id}`);
  if (session.ended_at) throw new SessionRefusal('session_ended', `session ${id} has ended (${session.ending})`);
  return session;
}

/** Ends a session at its caller's asking; false when it was not open. */
export async function closeSession(db: Db, accountId: string, id: string): Promise<SessionRow> {
  const session = await openSessionOf(db, accountId, id);
  await sql`
    WITH ended AS (UPDATE run_sessions SET ended_at = now(), ending = 'closed' WHERE id = ${id} AND ended_at IS NULL RETURNING id)
    DELETE FROM run_session_files f USING ended WHERE f.session_id = ended.id`.execute(db);
  return { ...session, ended_at: new Date(), ending: 'closed' };
}

/**
 * Marks the session busy for one run (runs of a session go one at a time, each starting
 * from the files the one before left), or refuses: not open, or a run is under way.
 */
export async function beginRun(db: Db, accountId: string, id: string): Promise<SessionRow> {
  const session = await openSessionOf(db, accountId, id);
  const { rows } = await sql<{ id: string }>`
    UPDATE run_sessions SET busy_until = now() + make_interval(secs => ${SESSION_LIMITS.busyMs / 1000}), last_active_at = now()
    WHERE id = ${id} AND account_id = ${accountId} AND ended_at IS NULL AND (busy_until IS NULL OR busy_until <= now())
    RETURNING id`.execute(db);
  if (rows.length === 0) throw new SessionRefusal('session_busy', `a run of session ${id} is under way; send the next when it has ended`);
  return session;
}

/** The run's end: the session is free again, and idle from now. */
export async function endRun(db: Db, id: string, counted: boolean): Promise<void> {
  await sql`UPDATE run_sessions SET busy_until = NULL, last_active_at = now(), runs = runs + ${counted ? 1 : 0} WHERE id = ${id}`.execute(db);
}

/** A file operation counts as activity; refused while a run is under way (its files would be overwritten by the run's). */
async function touchForFiles(db: Db, accountId: string, id: string, write: boolean): Promise<void> {
  const session = await openSessionOf(db, accountId, id);
  if (write && session.busy) throw new SessionRefusal('session_busy', `a run of session ${id} is under way; change its files when it has ended`);
  await sql`UPDATE run_sessions SET last_active_at = now() WHERE id = ${id}`.execute(db);
}

export interface WorkspaceEntry {
  path: string;
  size: number;
  mode: number;
}

export async function listFiles(db: Db, accountId: string, id: string): Promise<WorkspaceEntry[]> {
  await touchForFiles(db, accountId, id, false);
  const { rows } = await sql<WorkspaceEntry>`
    SELECT path, octet_length(content)::int AS size, mode FROM run_session_files WHERE session_id = ${id} ORDER BY path`.execute(db);
  return rows;
}

/** A workspace path as a caller names it: relative, no `..`, within the program file name rules. */
export function checkPath(path: string): void {
  const problem = pathProblem(path);
  if (problem) throw new SessionRefusal('invalid_request', `path ${JSON.stringify(path)} ${problem}`);
}

export async function readFile(db: Db, accountId: string, id: string, path: string): Promise<{ content: Buffer; mode: number } | undefined> {
  checkPath(path);
  await touchForFiles(db, accountId, id, false);
  const { rows } = await sql<{ content: Buffer; mode: number }>`
    SELECT content, mode FROM run_session_files WHERE session_id = ${id} AND path = ${path}`.execute(db);
  return rows[0];
}

/** Writes one file, within the workspace's bounds; a path that is another file's directory (or the reverse) is refused. */
export async function writeFile(db: Db, accountId: string, id: string, path: string, content: Buffer, mode = 0o644): Promise<void> {
  checkPath(path);
  if (content.length > SESSION_LIMITS.fileBytes) throw new SessionRefusal('invalid_request', `a file is at most ${SESSION_LIMITS.fileBytes} bytes`);
  await touchForFiles(db, accountId, id, true);
  await db.transaction().execute(async (trx) => {
    await sql`SELECT id FROM run_sessions WHERE id = ${id} FOR UPDATE`.execute(trx);
    const { rows } = await sql<{ files: number; bytes: string; clash: string | null }>`
      SELECT count(*)::int AS files, coalesce(sum(octet_length(content)), 0)::text AS bytes,
             min(path) FILTER (WHERE starts_with(${path}, path || '/') OR starts_with(path, ${path} || '/')) AS clash
      FROM run_session_files WHERE session_id = ${id} AND path <> ${path}`.execute(trx);
    const w = rows[0]!;
    if (w.clash) throw new SessionRefusal('invalid_request', `path ${path} clashes with ${w.clash}: a file cannot also be a directory`);
    if (w.files + 1 > SESSION_LIMITS.workspaceFiles || Number(w.bytes) + content.length > SESSION_LIMITS.workspaceBytes) {
      throw new SessionRefusal('workspace_full', `a workspace holds at most ${SESSION_LIMITS.workspaceFiles} files and ${SESSION_LIMITS.workspaceBytes} bytes`);
    }
    await sql`
      INSERT INTO run_session_files (session_id, path, mode, content) VALUES (${id}, ${path}, ${mode}, ${content})
      ON CONFLICT (session_id, path) DO UPDATE SET content = EXCLUDED.content, mode = EXCLUDED.mode`.execute(trx);
  });
}

/** Deletes a file, or every file below a directory; false when there was none. */
export async function deleteFile(db: Db, accountId: string, id: string, path: string): Promise<boolean> {
  checkPath(path);
  await touchForFiles(db, accountId, id, true);
  const { numAffectedRows } = await sql`
    DELETE FROM run_session_files WHERE session_id = ${id} AND (path = ${path} OR starts_with(path, ${path} || '/'))`.execute(db);
  return Number(numAffectedRows ?? 0) > 0;
}

/** A kernel session's restart: its kept state (.kernel/, src/sessions/kernel.ts) goes; the workspace's other files stay. */
export async function restartKernel(db: Db, accountId: string, id: string): Promise<SessionRow> {
  const session = await openSessionOf(db, accountId, id);
  if (session.kind !== 'kernel') throw new SessionRefusal('invalid_request', `session ${id} is a files session; only a kernel session restarts`);
  await touchForFiles(db, accountId, id, true);
  await sql`DELETE FROM run_session_files WHERE session_id = ${id} AND starts_with(path, '.kernel/')`.execute(db);
  return session;
}

/** The workspace a run of the session starts with (the runner's side). */
export async function loadWorkspace(db: Db, id: string): Promise<StageFile[]> {
  const { rows } = await sql<{ path: string; mode: number; content: Buffer }>`
    SELECT path, mode, content FROM run_session_files WHERE session_id = ${id} ORDER BY path`.execute(db);
  return rows.map((r) => ({ name: r.path, mode: r.mode, content: r.content }));
}

/**
 * What a run left in /box becomes the workspace (the runner's side): its regular files
 * whose names a caller could write, the first ones by name within the workspace's bounds.
 * The run's sandbox time is added to the session's. Nothing is written to a session that
 * has ended meanwhile, nor by a run whose claim on its job is gone; `files` undefined leaves the workspace as it was. Returns the names not kept.
 */
export async function saveWorkspace(db: Db, id: string, job: { id: string; attempt: number }, files: StageFile[] | undefined, sandboxMs: number): Promise<string[]> {
  const kept: StageFile[] = [];
  const dropped: string[] = [];
  let bytes = 0;
  for (const f of [...(files ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const fits = kept.length < SESSION_LIMITS.workspaceFiles && bytes + f.content.length <= SESSION_LIMITS.workspaceBytes;
    if (pathProblem(f.name) === undefined && fits) {
      kept.push(f);
      bytes += f.content.length;
    } else dropped.push(f.name);
  }
  await db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: string }>`
      UPDATE run_sessions SET sandbox_ms = sandbox_ms + ${Math.round(sandboxMs)} WHERE id = ${id} RETURNING id, ended_at`.execute(trx);
    const row = rows[0] as { id: string; ended_at: Date | null } | undefined;
    // No run stage ran (a compile error): the workspace stays as it was.
    if (!row || row.ended_at || files === undefined) return;
    // A run whose claim is gone (its lease ran out; the job was requeued) leaves nothing: the run that holds it now will.
    const { rows: held } = await sql`SELECT 1 FROM submissions WHERE id = ${job.id} AND state = 'running' AND attempts = ${job.attempt}`.execute(trx);
    if (held.length === 0) return;
    await sql`DELETE FROM run_session_files WHERE session_id = ${id}`.execute(trx);
    for (const f of kept) {
      await sql`INSERT INTO run_session_files (session_id, path, mode, content) VALUES (${id}, ${f.name}, ${f.mode & 0o777}, ${f.content})`.execute(trx);
    }
  });
  return dropped;
}
