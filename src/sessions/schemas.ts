import Type, { type Static } from 'typebox';
import { PROGRAM_LIMITS, REQUEST_LIMITS, SESSION_LIMITS } from '../limits.js';
import { ProgramFields, RunLimitsRequest } from '../program/fields.js';
import { CompilerIdSchema, Utf8Text } from '../api/schemas.js';

// The requests and answers of sessions, declared once for the REST routes
// (src/api/routes/sessions.ts) and the MCP tools (src/mcp).

const Dated = Type.String({ format: 'date-time' });
const NoNul = Type.String({ pattern: '^[^\\u0000]*$', maxLength: PROGRAM_LIMITS.argMaxBytes });

export const SessionOpenRequest = Type.Object(
  {
    compiler: CompilerIdSchema,
    kind: Type.Optional(
      Type.Enum(['files', 'kernel'], {
        description:
          'files (the default): a workspace that persists between runs, each run a fresh sandbox. kernel (Python 3 compilers): runs take cell, and variables, imports and definitions persist between cells as in a notebook.',
      }),
    ),
    limits: Type.Optional(RunLimitsRequest),
    idle_timeout: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: SESSION_LIMITS.idleTimeoutMaxSeconds,
        description: `Seconds without a run or a file read or written after which the session ends (ending idle_timeout); default ${SESSION_LIMITS.idleTimeoutDefaultSeconds}.`,
      }),
    ),
    max_lifetime: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `Seconds after which the session ends however busy (ending max_lifetime); default ${SESSION_LIMITS.lifetimeDefaultSeconds} or the plan's session lifetime if lower, at most the plan's.`,
      }),
    ),
  },
  { additionalProperties: false, description: 'A session: a workspace (/box) kept between its runs.' },
);
export type SessionOpenRequest = Static<typeof SessionOpenRequest>;

export const SessionRunRequest = Type.Object(
  {
    code: Type.Optional(Utf8Text(REQUEST_LIMITS.codeMaxBytes, "Source code run with the session's compiler, the workspace's files beside it.")),
    cell: Type.Optional(
      Utf8Text(REQUEST_LIMITS.codeMaxBytes, "A kernel session's cell: Python run in the kernel's namespace; the result's kernel field has its last expression's value and figures."),
    ),
    file: Type.Optional(Type.String({ description: 'A file of the workspace run as the program (built by the compiler with the workspace, as code would be).' })),
    command: Type.Optional(
      Type.Array(NoNul, {
        minItems: 1,
        maxItems: PROGRAM_LIMITS.argsMax + 1,
        description: "A command run in the workspace as an argv (never through a shell): the first element is looked up in the image's PATH, or a path such as ./prog.",
      }),
    ),
    input: Type.Optional(Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Standard input.')),
    args: ProgramFields.args,
    compiler_options: ProgramFields.compiler_options,
    return_files: ProgramFields.return_files,
  },
  { additionalProperties: false, description: 'One run of a session: exactly one of code, file and command (a files session) or cell (a kernel session). What it leaves in /box is there for the next.' },
);
export type SessionRunRequest = Static<typeof SessionRunRequest>;

export const SessionFileWrite = Type.Object(
  {
    content: Type.String({ description: `The file's content: UTF-8 text, or Base64 with encoding base64; at most ${SESSION_LIMITS.fileBytes} bytes decoded.` }),
    encoding: Type.Optional(Type.Enum(['utf-8', 'base64'])),
    executable: Type.Optional(Type.Boolean({ description: 'Mode 0755 instead of 0644.' })),
  },
  { additionalProperties: false },
);
export type SessionFileWrite = Static<typeof SessionFileWrite>;

export const SessionFileSchema = Type.Object({
  path: Type.String(),
  size: Type.Integer(),
  mode: Type.Integer({ description: 'Permission bits (0644 = 420, 0755 = 493).' }),
  encoding: Type.Enum(['utf-8', 'base64'], { description: 'utf-8 when the content is UTF-8 text without NUL, else base64.' }),
  content: Type.String(),
});

export const SessionFileEntry = Type.Object({ path: Type.String(), size: Type.Integer(), mode: Type.Integer() });

export const SessionView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  compiler: Type.String(),
  kind: Type.Enum(['files', 'kernel']),
  state: Type.Enum(['open', 'ended']),
  ending: Type.Union([Type.Enum(['closed', 'idle_timeout', 'max_lifetime']), Type.Null()], { description: 'Why it ended; null while open.' }),
  created_at: Dated,
  last_active_at: Dated,
  ended_at: Type.Union([Dated, Type.Null()]),
  idle_timeout: Type.Integer({ description: 'Seconds.' }),
  max_lifetime: Type.Integer({ description: 'Seconds.' }),
  busy: Type.Boolean({ description: 'A run is under way.' }),
  runs: Type.Integer({ description: 'Runs made (each billed as a run).' }),
  sandbox_seconds: Type.Number({ description: "Sandbox time the session's runs held." }),
});
