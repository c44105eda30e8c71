import Type, { type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { catalogue, offeredIds } from '../../compilers/catalogue.js';
import { REQUEST_LIMITS } from '../../limits.js';
import { CompilerIdSchema, ExtraParams, Utf8Text } from '../schemas.js';

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
});
export type WsRunMessage = Static<typeof WsRunMessage>;

const check = Compile(WsRunMessage);

export type Parsed = { ok: true; message: WsRunMessage } | { ok: false; id: string | null; message: string };

/** A client's message, checked; `recipesDir` (config RUNBOX_RECIPES_DIR) completes the catalogue the compiler must be in. */
export function parseClientMessage(raw: string, recipesDir = ''): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, id: null, message: 'messages must be JSON' };
  }
  const id = typeof (value as { id?: unknown })?.id === 'string' ? (value as { id: string }).id.slice(0, 200) : null;
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
