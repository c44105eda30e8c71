import { firstDifference, quote, tokenRestart, TokenReader } from './text.js';
import { accepted, type CheckData, type CheckResult, wrongAnswer } from './types.js';

// `floats`: tokens, where a number in the answer matches a number in the output within
// an absolute or a relative tolerance (either is enough, as testlib's doubleCompare and
// DMOJ's floats checker do); other tokens must be equal. testlib's 1e-15 of slack keeps
// a difference that is exactly the tolerance in decimal (1.000001 against 1) accepted
// although binary floating point makes it a hair larger.

export interface FloatsOptions {
  absolute?: number;
  relative?: number;
}

export const FLOATS_DEFAULT_TOLERANCE = 1e-6;
const SLACK = 1e-15;
/** A decimal number: sign, digits with an optional point, optional exponent. No hex, inf or nan. */
const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Longer tokens are not read as numbers (they are compared as text). */
const NUMBER_MAX_BYTES = 400;

function numberOf(token: Buffer): number | null {
  if (token.length > NUMBER_MAX_BYTES) return null;
  const text = token.toString('latin1');
  if (!NUMBER.test(text)) return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

/** A figure for a message: three significant digits, in JavaScript's shortest form. */
const short = (x: number) => String(Number(x.toPrecision(3)));

export function floats(data: CheckData, options: FloatsOptions = {}): CheckResult {
  const absolute = options.absolute ?? FLOATS_DEFAULT_TOLERANCE;
  const relative = options.relative ?? FLOATS_DEFAULT_TOLERANCE;
  const { output, answer } = data;
  const diff = firstDifference(output, answer);
  if (diff === -1) return accepted();
  // Tokens before the first differing byte are the same text in both.
  const { from, tokensBefore } = tokenRestart(output, diff);
  const found = new TokenReader(output, from, tokensBefore);
  const expected = new TokenReader(answer, from, tokensBefore);
  for (;;) {
    const index = found.index;
    const e = expected.next();
    const f = found.next();
    if (e === null && f === null) return accepted();
    if (f === null) return wrongAnswer(`token ${index}: expected ${quote(e)}, found the end of the output (line ${found.line})`);
    if (e === null) return wrongAnswer(`token ${index} (line ${found.line}): expected the end of the output, found ${quote(f)}`);
    if (e.equals(f)) continue;
    const want = numberOf(e);
    if (want === null) return wrongAnswer(`token ${index} (line ${found.line}): expected ${quote(e)}, found ${quote(f)}`);
    const got = numberOf(f);
    if (got === null) return wrongAnswer(`token ${index} (line ${found.line}): expected the number ${quote(e)}, found ${quote(f)}`);
    const delta = Math.abs(got - want);
    if (delta <= absolute + SLACK || delta <= relative * Math.abs(want) + SLACK) continue;
    return wrongAnswer(
      `token ${index} (line ${found.line}): expected ${quote(e)}, found ${quote(f)}: off by ${short(delta)}, ` +
        `more than the absolute tolerance ${absolute} and the relative ${relative} (${short(relative * Math.abs(want))} here)`,
    );
  }
}
