// Live output of WebSocket runs, from the runner host to the API host through
// Postgres: NOTIFY on OUTPUT_CHANNEL, one message per chunk, numbered per attempt of
// the submission so the receiving side can put them back in order. A final message
// with `end` says how many chunks there were. A run taken over by another runner (its
// first lost the lease) streams again from chunk 0 under its next attempt `a`, which
// makes the earlier attempt's output void. Payloads stay under Postgres's 8000-byte
// NOTIFY limit.

export const OUTPUT_CHANNEL = 'runbox_output';

/** A message as the runner writes it, before its attempt is put on. */
export type OutputBody =
  | { i: string; n: number; s: 'stdout' | 'stderr'; d: string }
  | { i: string; n: number; end: true };

export type OutputMessage = OutputBody & { a: number };

/** UTF-16 units per chunk: at most 3 bytes each in UTF-8, at most 6 once JSON-escaped, so well under 8000 bytes. */
export const OUTPUT_CHUNK_UNITS = 1000;

/** Splits text into chunks of at most OUTPUT_CHUNK_UNITS units, never inside a surrogate pair. */
export function splitOutput(text: string): string[] {
  const parts: string[] = [];
  let at = 0;
  while (at < text.length) {
    let end = Math.min(at + OUTPUT_CHUNK_UNITS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    parts.push(text.slice(at, end));
    at = end;
  }
  return parts;
}

export function parseOutputMessage(payload: string): OutputMessage | null {
  try {
    const m = JSON.parse(payload) as Partial<OutputMessage> & Record<string, unknown>;
    if (typeof m.i !== 'string' || typeof m.n !== 'number') return null;
    // A runner of an earlier release sends no attempt.
    const a = typeof m.a === 'number' ? m.a : 1;
    if (m.end === true) return { i: m.i, a, n: m.n, end: true };
    if ((m.s === 'stdout' || m.s === 'stderr') && typeof m.d === 'string') return { i: m.i, a, n: m.n, s: m.s, d: m.d };
    return null;
  } catch {
    return null;
  }
}
