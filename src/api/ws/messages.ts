import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { catalogue, offeredIds } from '../../compilers/catalogue.js';
import { REQUEST_LIMITS } from '../../limits.js';
import { JsonTextError, parseClientJson } from '../json-text.js';
import { rawMember } from '../../util/raw-json.js';
import { CompilerIdSchema, ExtraParams, unknownField, Utf8Text } from '../schemas.js';

// The WebSocket protocol, client to server: {"type":"run","id","code","input","compiler"}.
// Server to client: {"type":"output","id","seq","stream","data"} as the program writes,
// then {"type":"result","id",...result,"submission_id"}; or {"type":"error","id","code","message"}.

export const WsRunMessage = Type.Object({
  type: Type.Literal('run'),
  /** The client's own id for this run, echoed in every message about it. */
  id: Type.String({ minLength: 1, maxLength: 200 }),
  code: Utf8Text(REQUEST_LIMITS.codeMaxBytes, 'Source code.'),
  input: Type.Optional(Utf8Text(REQUEST_LIMITS.inputMaxBytes, 'Standard input.')),
  compiler: CompilerIdSchema,
  extra_params: Type.Optional(ExtraParams),
}, { additionalProperties: false });
export type WsRunMessage = Static<typeof WsRunMessage>;

const check = Compile(WsRunMessage);

export type Parsed = { ok: true; message: WsRunMessage } | { ok: false; id: string | null; message: string };

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

/** A client's message, checked; `recipesDir` (config RUNBOX_RECIPES_DIR) completes the catalogue the compiler must be in. */
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
  const unknown = unknownField(WsRunMessage, value);
  if (unknown) return { ok: false, id, message: `invalid run message: ${unknown}` };
  if (!check.Check(value)) {
    const first = [...check.Errors(value)][0];
    const where = first?.instancePath ? `${first.instancePath}: ` : '';
    return { ok: false, id, message: `invalid run message: ${where}${first?.message ?? 'bad value'}` };
  }
  const cat = catalogue(recipesDir);
  if (typeof value.compiler !== 'string' || !cat.entries.has(value.compiler)) {
    return { ok: false, id, message: `invalid run message: /compiler: must be one of: ${offeredIds(cat).join(', ')}` };
  }
  return { ok: true, message: value };
}
