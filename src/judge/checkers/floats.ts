import { equalIgnoringCase, quote } from './text.js';
import { describeTokenMismatch, firstTokenMismatch } from './tokens.js';
import { accepted, type CheckData, type CheckResult, wrongAnswer } from './types.js';

// `floats`: tokens, where a number in the answer matches a number in the output within
// an absolute or a relative tolerance (either is enough, as testlib's doubleCompare and
// DMOJ's floats checker do); other tokens must be equal. testlib's 1e-15 of slack keeps
// a difference that is exactly the tolerance in decimal (1.000001 against 1) accepted
// although binary floating point makes it a hair larger.

export interface FloatsOptions {
  absolute?: number;
  relative?: number;
  /** False: tokens that are not numbers compare without the case of their ASCII letters. */
  caseSensitive?: boolean;
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
  // Tokens that differ as text match when both are numbers within a tolerance.
  const close = (e: Buffer, f: Buffer) => {
    if (options.caseSensitive === false && equalIgnoringCase(e, f)) return true;
    const want = numberOf(e);
    const got = want === null ? null : numberOf(f);
    if (want === null || got === null) return false;
    const delta = Math.abs(got - want);
    return delta <= absolute + SLACK || delta <= relative * Math.abs(want) + SLACK;
  };
  const mismatch = firstTokenMismatch(data.output, data.answer, undefined, close);
  if (!mismatch) return accepted();
  const { index, line, expected: e, found: f } = mismatch;
  // Either end of the output, or a token of the answer that is not a number: as tokens says it.
  const want = e === null || f === null ? null : numberOf(e);
  if (want === null) return wrongAnswer(describeTokenMismatch(mismatch));
  const got = numberOf(f!);
  if (got === null) return wrongAnswer(`token ${index} (line ${line}): expected the number ${quote(e)}, found ${quote(f)}`);
  return wrongAnswer(
    `token ${index} (line ${line}): expected ${quote(e)}, found ${quote(f)}: off by ${short(Math.abs(got - want))}, ` +
      `more than the absolute tolerance ${absolute} and the relative ${relative} (${short(relative * Math.abs(want))} here)`,
  );
}
