import { firstDifference, lineNumber, lineStart, quote } from './text.js';
import { firstTokenMismatch } from './tokens.js';
import { accepted, type CheckData, type CheckResult, presentationError, wrongAnswer } from './types.js';

// `exact`: byte for byte. An output that differs only in whitespace (a missing final
// newline, \r\n line ends, double spaces) is a presentation error.

/** The line from `start` to its newline (not included), as written. */
function rawLine(buf: Buffer, start: number): Buffer | null {
  if (start >= buf.length) return null;
  const nl = buf.indexOf(0x0a, start);
  return buf.subarray(start, nl === -1 ? buf.length : nl);
}

export function exact(data: CheckData): CheckResult {
  const { output, answer } = data;
  const diff = firstDifference(output, answer);
  if (diff === -1) return accepted();
  const start = lineStart(output, diff);
  const line = lineNumber(output, start);
  const where = `line ${line}, byte ${diff - start + 1}`;
  if (!firstTokenMismatch(output, answer, diff)) {
    return presentationError(`the output differs from the answer only in whitespace, first at ${where}: expected ${quote(rawLine(answer, start))}, found ${quote(rawLine(output, start))}`);
  }
  return wrongAnswer(`${where}: expected ${quote(rawLine(answer, start))}, found ${quote(rawLine(output, start))}`);
}
