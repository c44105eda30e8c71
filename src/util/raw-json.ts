// JSON text handled as text: a member of an object exactly as the client wrote it
// (key order, number forms and escapes kept; only whitespace dropped), and objects
// written with their keys in a chosen order around such text.

/** JSON text to embed as is (it has been parsed once already, so it is valid). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** `{"k":v,...}` in the given order; RawJson values go in verbatim, undefined ones are left out. */
export function orderedJson(entries: Iterable<readonly [string, unknown]>): string {
  const parts: string[] = [];
  for (const [key, value] of entries) {
    if (value === undefined) continue;
    parts.push(`${JSON.stringify(key)}:${value instanceof RawJson ? value.text : JSON.stringify(value)}`);
  }
  return `{${parts.join(',')}}`;
}

const isSpace = (c: string | undefined) => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function skipSpace(text: string, at: number): number {
  while (isSpace(text[at])) at++;
  return at;
}

/** Index just past the string starting at `at` (a double quote). */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

/** Index just past the value starting at `at`. */
function valueEnd(text: string, at: number): number {
  const c = text[at];
  if (c === '"') return stringEnd(text, at);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let i = at; i < text.length; i++) {
      const d = text[i];
      if (d === '"') i = stringEnd(text, i) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return i + 1;
      }
    }
    return text.length;
  }
  let i = at;
  while (i < text.length && !isSpace(text[i]) && text[i] !== ',' && text[i] !== '}' && text[i] !== ']') i++;
  return i;
}

/** JSON text without the whitespace between tokens. */
export function compactJson(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      out += text.slice(i, end);
      i = end - 1;
    } else if (!isSpace(c)) out += c;
  }
  return out;
}

/**
 * The text of member `name` of the JSON object `text` (valid JSON, already parsed
 * once), compacted; the last one when the name repeats, as JSON.parse reads it.
 * Undefined when `text` is not an object or has no such member.
 */
export function rawMember(text: string, name: string): string | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return undefined;
  i = skipSpace(text, i + 1);
  let found: string | undefined;
  while (text[i] === '"') {
    const keyEnd = stringEnd(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, skipSpace(text, keyEnd) + 1); // past the colon
    const end = valueEnd(text, i);
    if (key === name) found = text.slice(i, end);
    i = skipSpace(text, end);
    if (text[i] !== ',') break;
    i = skipSpace(text, i + 1);
  }
  return found === undefined ? undefined : compactJson(found);
}
