// Program output is arbitrary bytes; results carry text. Invalid UTF-8 becomes U+FFFD,
// and so does NUL, which JSON can carry but Postgres jsonb (where results are stored)
// cannot, so whatever a program prints is delivered safely.
const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * `bytes` without a UTF-8 sequence cut short at its end. A stream kept to its first
 * 64 KB is cut at a byte count, maybe inside a character; the retained text then ends
 * at the last whole character instead of a U+FFFD for the half one.
 */
export function wholeCharacters(bytes: Buffer): Buffer {
  // The last sequence starts at most 3 bytes back (a continuation byte has 10 as its top two bits).
  for (let back = 1; back <= Math.min(4, bytes.length); back++) {
    const b = bytes[bytes.length - back]!;
    if ((b & 0xc0) === 0x80) continue;
    const need = b >= 0xf8 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return back < need && b >= 0xc0 ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

/** The text of a stream; `truncated`: it was cut at the retention limit, so a half character at its end goes. */
export function outputText(bytes: Buffer, truncated = false): string {
  return decoder.decode(truncated ? wholeCharacters(bytes) : bytes).replace(/\u0000/g, '\uFFFD');
}
