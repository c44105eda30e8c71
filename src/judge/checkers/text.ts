// Byte-level helpers shared by the built-in checkers. Outputs are compared as bytes, as
// the program wrote them (up to the 8 MB flood limit, or an answer's size beyond it):
// nothing is decoded or split into strings unless it has to be shown in a message.

/** Whitespace as C's isspace sees it in the "C" locale: space, \t, \n, \v, \f, \r. */
export function isSpace(byte: number): boolean {
  return byte === 0x20 || (byte >= 0x09 && byte <= 0x0d);
}

/** An ASCII capital letter as its small one; any other byte as it is (C's tolower in the "C" locale). */
export const lowerAscii = (byte: number) => (byte >= 0x41 && byte <= 0x5a ? byte + 0x20 : byte);

/** Two tokens equal but for the case of their ASCII letters. */
export function equalIgnoringCase(a: Buffer, b: Buffer): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (lowerAscii(a[i]!) !== lowerAscii(b[i]!)) return false;
  return true;
}

const NEWLINE = 0x0a;
/** Bytes compared per block (native memcmp) before the block that differs is scanned. */
const BLOCK_BYTES = 64 * 1024;

/**
 * Offset of the first byte where `a` and `b` differ (the shorter one's length when it is
 * a prefix of the other), or -1 when they are equal. Whole blocks are compared natively,
 * so equal megabytes cost a memcmp, not a loop in JavaScript.
 */
export function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let at = 0;
  while (at < n) {
    const end = Math.min(n, at + BLOCK_BYTES);
    if (a.compare(b, at, end, at, end) !== 0) break;
    at = end;
  }
  for (; at < n; at++) if (a[at] !== b[at]) return at;
  return a.length === b.length ? -1 : n;
}

/** Start of the line holding offset `at`. */
export function lineStart(buf: Buffer, at: number): number {
  if (at <= 0) return 0;
  const nl = buf.lastIndexOf(NEWLINE, at - 1);
  return nl + 1;
}

/** 1-based number of the line starting at `start` (newlines before it, plus one). */
export function lineNumber(buf: Buffer, start: number): number {
  let n = 1;
  for (let at = buf.indexOf(NEWLINE); at !== -1 && at < start; at = buf.indexOf(NEWLINE, at + 1)) n++;
  return n;
}

/** Lines of a buffer from `from` on, each without its trailing whitespace (\r included). */
export class LineReader {
  /** 1-based number of the next line. */
  number: number;
  private at: number;

  constructor(
    private readonly buf: Buffer,
    from = 0,
  ) {
    this.at = from;
    this.number = lineNumber(buf, from);
  }

  /** The next line, trimmed at its end; null past the last line. A final newline ends the last line, it does not start one. */
  next(): Buffer | null {
    if (this.at >= this.buf.length) return null;
    const nl = this.buf.indexOf(NEWLINE, this.at);
    const end = nl === -1 ? this.buf.length : nl;
    let stop = end;
    while (stop > this.at && isSpace(this.buf[stop - 1]!)) stop--;
    const line = this.buf.subarray(this.at, stop);
    this.at = end + 1;
    this.number++;
    return line;
  }

  /** Whether every line left is empty once trimmed (trailing empty lines do not count). */
  restIsBlank(): boolean {
    for (let i = this.at; i < this.buf.length; i++) if (!isSpace(this.buf[i]!)) return false;
    return true;
  }
}

/** Whitespace-separated tokens of a buffer, from `from` on, with the line each is on. */
export class TokenReader {
  /** 1-based index of the next token (counted from the buffer's start: pass the tokens before `from`). */
  index: number;
  /** Line of the last token read (1-based). */
  line: number;
  private at: number;

  constructor(
    private readonly buf: Buffer,
    from = 0,
    tokensBefore = 0,
  ) {
    this.at = from;
    this.index = tokensBefore + 1;
    this.line = lineNumber(buf, from);
  }

  next(): Buffer | null {
    const buf = this.buf;
    let at = this.at;
    for (; at < buf.length && isSpace(buf[at]!); at++) if (buf[at] === NEWLINE) this.line++;
    if (at >= buf.length) {
      this.at = at;
      return null;
    }
    const start = at;
    while (at < buf.length && !isSpace(buf[at]!)) at++;
    this.at = at;
    this.index++;
    return buf.subarray(start, at);
  }
}

/**
 * Where token-wise comparison may start again after the common prefix `[0, diff)`:
 * the start of the token that holds `diff` (the prefix is the same in both, so this is
 * a token boundary in both), and how many tokens come before it.
 */
export function tokenRestart(buf: Buffer, diff: number): { from: number; tokensBefore: number } {
  let from = Math.min(diff, buf.length);
  while (from > 0 && !isSpace(buf[from - 1]!)) from--;
  let tokens = 0;
  let inToken = false;
  for (let i = 0; i < from; i++) {
    const space = isSpace(buf[i]!);
    if (!space && !inToken) tokens++;
    inToken = !space;
  }
  return { from, tokensBefore: tokens };
}

/** Most bytes of one line or token quoted in a message. */
const QUOTE_BYTES = 80;

/** A piece of output for a message: JSON-quoted (control characters escaped), cut with an ellipsis. */
export function quote(bytes: Buffer | null): string {
  if (bytes === null) return 'nothing';
  const cut = bytes.length > QUOTE_BYTES;
  const text = bytes.subarray(0, QUOTE_BYTES).toString('utf8');
  return JSON.stringify(cut ? `${text.replace(/\uFFFD$/, '')}…` : text);
}
