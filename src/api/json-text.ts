import { REQUEST_LIMITS } from '../limits.js';

// JSON text from a client, turned into a value under the rules every body follows
// (REST bodies and WebSocket messages alike), in an order that keeps the process safe:
// the nesting depth is counted on the text before anything parses or walks it, so no
// recursive walk (JSON.stringify, a schema check, a copy) can overflow the stack; and
// strings must be valid Unicode: a lone surrogate escape ("\ud800") has no UTF-8 form,
// so neither the database nor a result could carry it.

export class JsonTextError extends Error {
  constructor(
    readonly code: 'too_deeply_nested' | 'invalid_json' | 'invalid_unicode',
    message: string,
  ) {
    super(message);
  }
}

/** Deepest nesting of arrays/objects in JSON text, counted without parsing it. */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

// With the u flag a surrogate only matches when it is not half of a pair.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/**
 * Where the first string (or member name) with a lone surrogate is in `value`, as a
 * field path (`code`, `tests[0].input`, `extra_params.a`); undefined when there is none.
 * Recursive: only for values whose depth has been bounded.
 */
export function loneSurrogateAt(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return LONE_SURROGATE.test(value) ? path : undefined;
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogateAt(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, member] of Object.entries(value)) {
    // A bad member name: the object holding it is named.
    if (LONE_SURROGATE.test(key)) return path;
    const found = loneSurrogateAt(member, path === '' ? key : `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Parses client JSON text: depth first, then JSON.parse, then valid Unicode. */
export function parseClientJson(text: string, what: string): unknown {
  if (jsonDepth(text) > REQUEST_LIMITS.jsonMaxDepth) {
    throw new JsonTextError('too_deeply_nested', `${what} is nested deeper than ${REQUEST_LIMITS.jsonMaxDepth} levels`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (err) {
    throw new JsonTextError('invalid_json', `${what} is not valid JSON: ${(err as Error).message}`);
  }
  const at = loneSurrogateAt(value);
  if (at !== undefined) {
    const field = at === '' ? what : at;
    throw new JsonTextError('invalid_unicode', `${field} contains a lone surrogate (an unpaired \\ud800-\\udfff escape): text must be valid Unicode`);
  }
  return value;
}
