import { isSpace, quote } from './text.js';
import { accepted, type CheckData, type CheckResult, wrongAnswer } from './types.js';

// `unordered_lines`: the same lines in any order (each line without its trailing
// whitespace, trailing empty lines ignored, a line repeated must be repeated as often).
// Lines are compared as multisets of 52-bit hashes (two independent 32-bit hashes
// combined), sorted natively: a Map of the lines themselves took a second for 8 MB of
// short lines, on the runner's event loop. Two different lines agree on both hashes with
// a chance of about 2^-52.

interface Lines {
  hashes: Float64Array;
  /** Offsets of each line's start and trimmed end, for messages. */
  starts: Uint32Array;
  ends: Uint32Array;
  count: number;
}

function hashLines(buf: Buffer): Lines {
  let capacity = 1024;
  let hashes = new Float64Array(capacity);
  let starts = new Uint32Array(capacity);
  let ends = new Uint32Array(capacity);
  let count = 0;
  let lastNonEmpty = 0;
  for (let at = 0; at < buf.length; ) {
    const nl = buf.indexOf(0x0a, at);
    const lineEnd = nl === -1 ? buf.length : nl;
    let end = lineEnd;
    while (end > at && isSpace(buf[end - 1]!)) end--;
    // FNV-1a and a multiply-xorshift hash over the same bytes.
    let h1 = 0x811c9dc5;
    let h2 = 0x9e3779b9;
    for (let i = at; i < end; i++) {
      const c = buf[i]!;
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ (h2 >>> 15), 0x2c1b3c6d) + c;
    }
    h2 = Math.imul(h2 ^ (h2 >>> 13), 0x297a2d39) ^ (end - at);
    if (count === capacity) {
      capacity *= 2;
      hashes = grow(hashes, capacity);
      starts = grow(starts, capacity);
      ends = grow(ends, capacity);
    }
    hashes[count] = (h1 >>> 0) * 0x100000 + ((h2 >>> 0) >>> 12);
    starts[count] = at;
    ends[count] = end;
    count++;
    if (end > at) lastNonEmpty = count;
    at = lineEnd + 1;
  }
  return { hashes: hashes.subarray(0, lastNonEmpty), starts, ends, count: lastNonEmpty };
}

function grow<T extends Float64Array | Uint32Array>(a: T, capacity: number): T {
  const b = new (a.constructor as new (n: number) => T)(capacity);
  b.set(a);
  return b;
}

/** Walks the sorted hashes of both: a hash of the answer's the output lacks (preferred), else one of the output's the answer lacks. */
function firstUnmatched(found: Float64Array, expected: Float64Array): { missing: number } | { extra: number } | null {
  let extra: number | null = null;
  let i = 0;
  let j = 0;
  while (j < expected.length) {
    if (i < found.length && found[i] === expected[j]) {
      i++;
      j++;
    } else if (i >= found.length || expected[j]! < found[i]!) return { missing: expected[j]! };
    else extra ??= found[i++]!;
  }
  if (extra === null && i < found.length) extra = found[i]!;
  return extra === null ? null : { extra };
}

export function unorderedLines(data: CheckData): CheckResult {
  if (data.output.equals(data.answer)) return accepted();
  const found = hashLines(data.output);
  const expected = hashLines(data.answer);
  const unmatched = firstUnmatched(Float64Array.from(found.hashes).sort(), Float64Array.from(expected.hashes).sort());
  if (!unmatched) return accepted();
  const counts = `(the output has ${found.count} lines, the answer ${expected.count})`;
  if ('missing' in unmatched) {
    const at = expected.hashes.indexOf(unmatched.missing);
    return wrongAnswer(`line ${at + 1} of the answer, ${quote(data.answer.subarray(expected.starts[at], expected.ends[at]))}, is not in the output ${counts}`);
  }
  const at = found.hashes.lastIndexOf(unmatched.extra);
  return wrongAnswer(`line ${at + 1} of the output, ${quote(data.output.subarray(found.starts[at], found.ends[at]))}, is not in the answer ${counts}`);
}
