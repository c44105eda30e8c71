import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { catalogue, offeredIds } from '../../compilers/catalogue.js';
import { REQUEST_LIMITS } from '../../limits.js';
import { REJECTION_REASONS } from '../../quota/admit.js';
import { JsonTextError, parseClientJson } from '../json-text.js';
import { rawMember } from '../../util/raw-json.js';
import { CompilerIdSchema, ExtraParams, JudgingFields, unknownField, Utf8Text } from '../schemas.js';
import { ProgramFields } from '../../program/fields.js';

// The WebSocket protocol, client to server: {"type":"run","id","code" or "files",…the program's fields,"input","compiler","interactive"}
// and, for an interactive run, {"type":"stdin","id","data"} / {"type":"stdin","id","eof":true}.
// Server to client: {"type":"output","id","attempt","seq","stream","data"} as the program writes,
// then {"type":"result","id",...result,"submission_id"}; or {"type":"error","id","code","message"}.

/** The client's own id for a run, echoed in every message about it. */
const RunId = Type.String({ minLength: 1, maxLength: 200, description: "The client's own id for this run, echoed in every message about it." });

export const WsRunMessage = Type.Object({
  type: Type.Literal('run'),
  id: RunId,
  code: Type.Optional(Utf8Text(REQUEST_LIMITS.codeMaxBytes, 'Source code; or files instead.')),
  ...ProgramFields,
  input: Type.Optional(Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Standard input, written first (an interactive run reads what it is sent after it).')),
  compiler: CompilerIdSchema,
  extra_params: Type.Optional(ExtraParams),
  expected_output: JudgingFields.expected_output,
  checker: JudgingFields.checker,
  problem: Type.Optional(
    Type.String({
      description: "A stored problem (of the key's account, or any account's public one): judged against its tests, under its feedback setting for widget and student keys; no input, expected_output or checker with it.",
    }),
  ),
  interactive: Type.Optional(
    Type.Boolean({
      description:
        "The program's stdin stays open while it runs: send stdin messages with this run's id, and one with eof to close it. A pipe, not a terminal.",
    }),
  ),
}, { additionalProperties: false });
export type WsRunMessage = Static<typeof WsRunMessage>;

export const WsStdinMessage = Type.Object({
  type: Type.Literal('stdin'),
  id: RunId,
  data: Type.Optional(Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Input for the running program, written to its stdin as it is (a line needs its newline).')),
  eof: Type.Optional(Type.Literal(true, { description: "Closes the program's stdin (after data, when both are given)." })),
}, { additionalProperties: false, description: 'Input for an interactive run of this connection. The run\'s stdin in all (input included) is at most the input limit.' });
export type WsStdinMessage = Static<typeof WsStdinMessage>;

export const WsProblemMessage = Type.Object({
  type: Type.Literal('problem'),
  id: RunId,
  problem: Type.String({ description: "A stored problem's id (of the key's account, or a public one)." }),
}, { additionalProperties: false, description: "Asks for a stored problem's name, statement, limits, feedback and samples (what an exercise shows); answered with a problem message." });
export type WsProblemMessage = Static<typeof WsProblemMessage>;

/** Every message a client may send, told apart by `type`. */
export const WsClientMessage = Type.Union([WsRunMessage, WsStdinMessage, WsProblemMessage]);
export type WsClientMessage = Static<typeof WsClientMessage>;

const checkRun = Compile(WsRunMessage);
const checkStdin = Compile(WsStdinMessage);
const checkProblem = Compile(WsProblemMessage);

export type Parsed = { ok: true; message: WsClientMessage } | { ok: false; id: string | null; message: string };

/** The client's run id from a message refused before parsing, so its error names the run. */
function idOf(raw: string): string | null {
  try {
    const text = rawMember(raw, 'id');
    const id: unknown = text !== undefined && text.startsWith('"') ? JSON.parse(text) : undefined;
    return typeof id === 'string' && !/[\uD800-\uDFFF]/u.test(id) ? id.slice(0, 200) : null;
  } catch {
    return null;
  }
}

/** A client's message, checked; `recipesDir` (config RUNBOX_RECIPES_DIR) completes the catalogue a run's compiler must be in. */
export function parseClientMessage(raw: string, recipesDir = ''): Parsed {
  let value: unknown;
  try {
    // The body rules of REST requests (depth, valid Unicode) before anything walks it;
    // size and UTF-8 are the socket's (maxPayload, and ws closes on bad UTF-8).
    value = parseClientJson(raw, 'the message');
  } catch (err) {
    if (!(err instanceof JsonTextError)) throw err;
    return { ok: false, id: err.code === 'invalid_json' ? null : idOf(raw), message: err.code === 'invalid_json' ? 'messages must be JSON' : err.message };
  }
  const id = typeof (value as { id?: unknown })?.id === 'string' ? (value as { id: string }).id.slice(0, 200) : null;
  const type = (value as { type?: unknown } | null)?.type;
  if (type !== 'run' && type !== 'stdin' && type !== 'problem') return { ok: false, id, message: 'invalid message: /type: must be "run", "stdin" or "problem"' };
  const [schema, check] = type === 'run' ? [WsRunMessage, checkRun] : type === 'stdin' ? [WsStdinMessage, checkStdin] : [WsProblemMessage, checkProblem];
  const unknown = unknownField(schema, value);
  if (unknown) return { ok: false, id, message: `invalid ${type} message: ${unknown}` };
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const where = first?.instancePath ? `${first.instancePath}: ` : '';
    return { ok: false, id, message: `invalid ${type} message: ${where}${first?.message ?? 'bad value'}` };
  }
  if (value.type === 'problem') return { ok: true, message: value };
  if (value.type === 'stdin') {
    if (value.data === undefined && value.eof === undefined) return { ok: false, id, message: 'invalid stdin message: give data, eof or both' };
    return { ok: true, message: value };
  }
  const cat = catalogue(recipesDir);
  if (typeof value.compiler !== 'string' || !cat.entries.has(value.compiler)) {
    return { ok: false, id, message: `invalid run message: /compiler: must be one of: ${offeredIds(cat).join(', ')}` };
  }
  return { ok: true, message: value };
}

// Server to client (documented; the result carries the fields of a run's result).
const ServerRunId = Type.Union([Type.String(), Type.Null()], { description: "The client's run id; null when the message could not be read." });

export const WsOutputMessage = Type.Object({
  type: Type.Literal('output'),
  id: Type.String(),
  attempt: Type.Integer({
    minimum: 1,
    description: "The run's attempt that wrote it. A run taken over by another runner streams again from seq 0 under a later attempt: what was shown of an earlier attempt is void.",
  }),
  seq: Type.Integer({ minimum: 0, description: 'Counts from 0 within the attempt, no gaps.' }),
  stream: Type.Enum(['stdout', 'stderr']),
  data: Type.String(),
});

export const WsResultMessage = Type.Object(
  { type: Type.Literal('result'), id: Type.String(), submission_id: Type.String() },
  { description: "The run's result (the fields of GET /api/v2/submissions/{id}/), id being the client's run id." },
);

/** Error codes: a refused run's are the admission's reasons (src/quota/admit.ts). */
export const WS_ERROR_CODES = [
  'bad_request', ...REJECTION_REASONS, 'compiler_unavailable', 'maintenance', 'codeoutput', 'origin_not_allowed', 'invalid_key',
  'unknown_run', 'not_interactive', 'run_finished', 'stdin_closed', 'input_limit', 'not_found', 'internal_error',
] as const;

export const WsErrorMessage = Type.Object({
  type: Type.Literal('error'),
  id: ServerRunId,
  code: Type.Enum([...WS_ERROR_CODES]),
  message: Type.String({ description: 'What went wrong, for people.' }),
  retry_after: Type.Optional(Type.Integer({ description: 'Seconds to wait before trying again (refused runs).' })),
  reason: Type.Optional(Type.String({ description: 'codeoutput errors: the refusal behind the message.' })),
});

export const WsProblemAnswer = Type.Object(
  {
    type: Type.Literal('problem'),
    id: Type.String(),
    problem: Type.Object({
      id: Type.String(),
      name: Type.String(),
      version: Type.Integer(),
      feedback: Type.String(),
      limits: Type.Object({ time: Type.Optional(Type.Number()), memory: Type.Optional(Type.Integer()) }),
      statement: Type.Union([Type.String(), Type.Null()], { description: 'Its statement when it has one, as stored: Markdown, or LaTeX source (see statement_format).' }),
      statement_format: Type.Union([Type.Literal('markdown'), Type.Literal('latex'), Type.Null()], { description: "The statement's format; null when it has none." }),
      samples: Type.Array(Type.Object({ name: Type.String(), input: Type.String(), expected_output: Type.String() })),
      hidden_tests: Type.Integer({ description: 'How many tests are not samples (shown by neither content nor name).' }),
    }),
  },
  { description: 'A stored problem as an exercise shows it: only its samples have content.' },
);

export const WsServerMessage = Type.Union([WsOutputMessage, WsResultMessage, WsErrorMessage, WsProblemAnswer]);
