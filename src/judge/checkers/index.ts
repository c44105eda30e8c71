import { exact } from './exact.js';
import { floats, type FloatsOptions } from './floats.js';
import { lines } from './lines.js';
import { tokens } from './tokens.js';
import type { CheckData, CheckResult } from './types.js';
import { unorderedLines } from './unordered-lines.js';

// The built-in comparisons, by the name a request gives in `checker.type`. Each is a pure
// function of (input, output, answer, options) to (verdict, score, message), one file
// each; a checker program (program.ts) answers in the same shape.

export type { CheckData, CheckResult, CheckVerdict } from './types.js';
export { CHECK_VERDICTS } from './types.js';
export { FLOATS_DEFAULT_TOLERANCE } from './floats.js';

export const BUILTIN_CHECKERS = {
  lines: (data: CheckData) => lines(data),
  exact: (data: CheckData) => exact(data),
  tokens: (data: CheckData) => tokens(data),
  floats: (data: CheckData, options: FloatsOptions) => floats(data, options),
  unordered_lines: (data: CheckData) => unorderedLines(data),
} as const;

export type BuiltinCheckerType = keyof typeof BUILTIN_CHECKERS;
export const BUILTIN_CHECKER_TYPES = Object.keys(BUILTIN_CHECKERS) as BuiltinCheckerType[];
/** The comparison of a test when the request names none (Judge0's). */
export const DEFAULT_CHECKER: BuiltinCheckerType = 'lines';

/** A built-in checker as a request names it. */
export type BuiltinChecker = { type: Exclude<BuiltinCheckerType, 'floats'> } | ({ type: 'floats' } & FloatsOptions);

export function checkBuiltin(checker: BuiltinChecker, data: CheckData): CheckResult {
  if (checker.type === 'floats') return BUILTIN_CHECKERS.floats(data, { absolute: checker.absolute, relative: checker.relative });
  return BUILTIN_CHECKERS[checker.type](data);
}
