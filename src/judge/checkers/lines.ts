import { firstDifference, LineReader, lineStart, quote } from './text.js';
import { firstTokenMismatch } from './tokens.js';
import { accepted, type CheckData, type CheckResult, presentationError, wrongAnswer } from './types.js';

// `lines`, the default comparison, as Judge0 compares: line by line, each line without
// its trailing whitespace (so \r\n line ends pass), trailing empty lines ignored.
// Equal as tokens but not as lines (numbers split over lines differently) is a
// presentation error.

export interface LineMismatch {
  line: number;
  expected: Buffer | null;
  found: Buffer | null;
}

/** The first line where the output and the answer differ once trimmed, or null. */
export function firstLineMismatch(output: Buffer, answer: Buffer, diff = firstDifference(output, answer)): LineMismatch | null {
  if (diff === -1) return null;
  // The lines before the one holding the first different byte are equal in both.
  const from = lineStart(output, diff);
  const found = new LineReader(output, from);
  const expected = new LineReader(answer, from);
  for (;;) {
    const line = found.number;
    const e = expected.next();
    const f = found.next();
    if (e === null && f === null) return null;
    if (e === null) {
      if (f!.length === 0 && found.restIsBlank()) return null;
      return { line, expected: null, found: f };
    }
    if (f === null) {
      if (e.length === 0 && expected.restIsBlank()) return null;
      return { line, expected: e, found: null };
    }
    if (!e.equals(f)) return { line, expected: e, found: f };
  }
}

export function describeLineMismatch(m: LineMismatch): string {
  if (m.found === null) return `line ${m.line}: expected ${quote(m.expected)}, found the end of the output`;
  if (m.expected === null) return `line ${m.line}: expected the end of the output, found ${quote(m.found)}`;
  return `line ${m.line}: expected ${quote(m.expected)}, found ${quote(m.found)}`;
}

export function lines(data: CheckData): CheckResult {
  const diff = firstDifference(data.output, data.answer);
  const mismatch = firstLineMismatch(data.output, data.answer, diff);
  if (!mismatch) return accepted();
  const message = describeLineMismatch(mismatch);
  if (!firstTokenMismatch(data.output, data.answer, diff)) return presentationError(`the tokens are right but not their lines: ${message}`);
  return wrongAnswer(message);
}
