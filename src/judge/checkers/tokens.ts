import { equalIgnoringCase, firstDifference, quote, tokenRestart, TokenReader } from './text.js';
import { accepted, type CheckData, type CheckResult, wrongAnswer } from './types.js';

// `tokens`: the output and the answer as whitespace-separated tokens, compared one by
// one; how tokens are spread over lines and spaces does not matter.

export interface TokenMismatch {
  /** 1-based index of the token. */
  index: number;
  /** Line of the output where it is (or where the output ended). */
  line: number;
  expected: Buffer | null;
  found: Buffer | null;
}

/**
 * The first token where `output` and `answer` differ, or null when their tokens are
 * the same. `diff` is their first differing byte (firstDifference): the tokens before
 * the one that holds it are equal, so reading starts there. `same` says whether two
 * tokens that are not byte for byte equal match all the same (floats: numbers within
 * a tolerance).
 */
export function firstTokenMismatch(
  output: Buffer,
  answer: Buffer,
  diff = firstDifference(output, answer),
  same?: (expected: Buffer, found: Buffer) => boolean,
): TokenMismatch | null {
  if (diff === -1) return null;
  const { from, tokensBefore } = tokenRestart(output, diff);
  const found = new TokenReader(output, from, tokensBefore);
  const expected = new TokenReader(answer, from, tokensBefore);
  for (;;) {
    const index = found.index;
    const e = expected.next();
    const f = found.next();
    if (e === null && f === null) return null;
    if (e === null || f === null || !(e.equals(f) || same?.(e, f))) return { index, line: found.line, expected: e, found: f };
  }
}

/** "token 3 (line 2): expected "5", found "6"": what a token mismatch says. */
export function describeTokenMismatch(m: TokenMismatch): string {
  if (m.found === null) return `token ${m.index}: expected ${quote(m.expected)}, found the end of the output (line ${m.line})`;
  if (m.expected === null) return `token ${m.index} (line ${m.line}): expected the end of the output, found ${quote(m.found)}`;
  return `token ${m.index} (line ${m.line}): expected ${quote(m.expected)}, found ${quote(m.found)}`;
}

export interface TokensOptions {
  /** False: letters compare without their case (ASCII, as Kattis' default validator). */
  caseSensitive?: boolean;
}

export function tokens(data: CheckData, options: TokensOptions = {}): CheckResult {
  const mismatch = firstTokenMismatch(data.output, data.answer, undefined, options.caseSensitive === false ? equalIgnoringCase : undefined);
  return mismatch ? wrongAnswer(describeTokenMismatch(mismatch)) : accepted();
}
