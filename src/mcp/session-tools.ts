import Type from 'typebox';
import { ApiError } from '../api/errors.js';
import { waitForRunEnd } from '../api/live.js';
import { validate } from '../api/middleware/json-body.js';
import { fileAnswer, openForCaller, refusals, runForCaller, sessionView } from '../api/routes/sessions.js';
import { decodeBase64 } from '../program/program.js';
import type { RunResult } from '../result.js';
import { SessionFileWrite, SessionOpenRequest, SessionRunRequest } from '../sessions/schemas.js';
import { closeSession, deleteFile, listFiles, readFile, writeFile } from '../sessions/store.js';
import { runContent, type Content } from './result-content.js';
import type { Tool } from './tools.js';

// The session tools: a workspace kept between runs, as POST /api/v2/sessions and its
// routes give it, with the same schemas and the same domain calls.

const SessionId = Type.String({ description: 'The session id session_open returned (a UUID).' });

export const SessionRunInput = Type.Object(
  { session_id: SessionId, ...SessionRunRequest.properties },
  { additionalProperties: false, description: 'One run of a session: exactly one of code, file and command (a files session) or cell (a kernel session); session_id names the session.' },
);
type SessionRunInput = { session_id: string } & SessionRunRequest;

export const SessionFilesInput = Type.Object(
  {
    session_id: SessionId,
    action: Type.Enum(['list', 'read', 'write', 'delete'], { description: 'list the workspace; read, write or delete the file at path.' }),
    path: Type.Optional(Type.String({ description: 'A path relative to /box (read, write, delete).' })),
    ...SessionFileWrite.properties,
    content: Type.Optional(SessionFileWrite.properties.content),
  },
  { additionalProperties: false },
);
type SessionFilesInput = { session_id: string; action: 'list' | 'read' | 'write' | 'delete'; path?: string; content?: string; encoding?: 'utf-8' | 'base64'; executable?: boolean };

export const SessionCloseInput = Type.Object({ session_id: SessionId }, { additionalProperties: false });

/** A cell's result: the run's, then what a notebook shows of it (the value, the error, what was not kept) and its figures as images. */
function cellContent(r: RunResult): Content[] {
  const [head, ...rest] = runContent(r);
  const k = r.kernel;
  if (!k || !head || head.type !== 'text') return [...(head ? [head] : []), ...rest];
  const lines = [
    `value: ${k.value ?? '(none)'}`,
    ...(k.error ? [`cell error: ${k.error.name}: ${k.error.message}`] : []),
    ...(k.not_kept.length > 0 ? [`not kept for the next cell: ${k.not_kept.map((n) => `${n.name} (${n.reason})`).join('; ')}`] : []),
  ];
  return [{ type: 'text', text: `${head.text}\n${lines.join('\n')}` }, ...rest, ...k.images.map((i) => ({ type: 'image' as const, data: i.content_base64, mimeType: 'image/png' }))];
}

const text = (value: unknown) => [{ type: 'text' as const, text: typeof value === 'string' ? value : JSON.stringify(value, null, 2) }];

const sessionOpen: Tool = {
  name: 'session_open',
  title: 'Open a session',
  description: [
    'Opens a session: a workspace (/box) that keeps its files between runs, for work in steps (write a file, compile, run the tests, fix, run again).',
    'With kind "kernel" (a Python 3 compiler) it is a notebook kernel instead: session_run takes cell, and variables, imports and functions persist between cells.',
    'Give compiler (an id from list_compilers); limits, idle_timeout and max_lifetime (seconds) are optional. Returns the session, whose id the other session tools take.',
    'The session ends after idle_timeout seconds without use, at max_lifetime, or with session_close; its files go with it.',
  ].join(' '),
  input: SessionOpenRequest,
  call: async (call, args) => {
    await call.assertNotInMaintenance();
    const body = validate<SessionOpenRequest>(SessionOpenRequest, args);
    return text(sessionView(await openForCaller(call.deps, call.auth, body, call.available)));
  },
};

const sessionRun: Tool = {
  name: 'session_run',
  title: 'Run in a session',
  description: [
    "Runs one of: code (with the session's compiler, the workspace's files beside it), file (a file of the workspace as the program),",
    'or command (an argv array run in /box, such as ["gcc-9", "-o", "prog", "main.c"] then ["./prog"]; never a shell string).',
    'Each run is a fresh sandbox that starts with the workspace; the files it leaves there are the next run\'s. Returns the result as run_code does.',
    "A kernel session's run is cell (Python source): its result adds the last expression's value, the cell's error and its matplotlib figures as images.",
  ].join(' '),
  input: SessionRunInput,
  call: async (call, args) => {
    await call.assertNotInMaintenance();
    const { session_id, ...body } = validate<SessionRunInput>(SessionRunInput, args);
    const live = call.deps.live;
    if (!live) throw new ApiError(500, 'internal_error', 'session runs are not available on this API process');
    const json = await runForCaller(call.deps, call.auth, session_id, body, (s) => waitForRunEnd(call.res, live, s.id, call.deps.db, call.deps.log, s.admittedAt));
    if (json === null) throw new ApiError(499, 'cancelled', 'the caller went away; the run was stopped');
    return cellContent(JSON.parse(json) as RunResult);
  },
};

const sessionFiles: Tool = {
  name: 'session_files',
  title: "A session's files",
  description: [
    "Reads and writes a session's workspace: action list (every file with its size), read (a file's content: text, or base64 for binary files),",
    'write (path and content; encoding base64 for binary, executable for mode 0755), delete (a file, or a directory with everything below it).',
    'Paths are relative to /box: no .., no leading /.',
  ].join(' '),
  input: SessionFilesInput,
  call: async ({ deps, auth, assertNotInMaintenance }, args) => {
    const a = validate<SessionFilesInput>(SessionFilesInput, args);
    const db = deps.db;
    const path = () => {
      if (a.path === undefined) throw new ApiError(400, 'invalid_request', `action ${a.action} needs a path`);
      return a.path;
    };
    switch (a.action) {
      case 'list':
        return text({ files: await refusals(() => listFiles(db, auth.accountId, a.session_id)) });
      case 'read': {
        const file = await refusals(() => readFile(db, auth.accountId, a.session_id, path()));
        if (!file) throw new ApiError(404, 'not_found', `no file ${path()} in the workspace`);
        return text(fileAnswer(path(), file));
      }
      case 'write': {
        await assertNotInMaintenance();
        if (a.content === undefined) throw new ApiError(400, 'invalid_request', 'action write needs content');
        const content = a.encoding === 'base64' ? decodeBase64(a.content) : Buffer.from(a.content, 'utf8');
        if (!content) throw new ApiError(400, 'invalid_request', 'content is not Base64 (padded, without line breaks)');
        await refusals(() => writeFile(db, auth.accountId, a.session_id, path(), content, a.executable ? 0o755 : 0o644));
        return text(`wrote ${path()} (${content.length} bytes)`);
      }
      case 'delete':
        if (!(await refusals(() => deleteFile(db, auth.accountId, a.session_id, path())))) throw new ApiError(404, 'not_found', `no file ${path()} in the workspace`);
        return text(`deleted ${path()}`);
    }
  },
};

const sessionClose: Tool = {
  name: 'session_close',
  title: 'Close a session',
  description: 'Ends a session; its workspace and files are gone.',
  input: SessionCloseInput,
  call: async ({ deps, auth }, args) => {
    const { session_id } = validate<{ session_id: string }>(SessionCloseInput, args);
    return text(sessionView(await refusals(() => closeSession(deps.db, auth.accountId, session_id))));
  },
};

export const SESSION_TOOLS: Tool[] = [sessionOpen, sessionRun, sessionFiles, sessionClose];
