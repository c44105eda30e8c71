import { exact } from './exact.js';
import { floats, type FloatsOptions } from './floats.js';
import { kattis, kattisOptions, ValidatorFlagsError } from './kattis.js';
import { lines } from './lines.js';
import { tokens, type TokensOptions } from './tokens.js';
import type { CheckData, CheckResult } from './types.js';
import { unorderedLines } from './unordered-lines.js';

// The built-in comparisons, by the name a request gives in `checker.type`. Each is a pure
// function of (input, output, answer, options) to (verdict, score, message), one file
// each; a checker program (program.ts) answers in the same shape.

export type { CheckData, CheckResult, CheckVerdict } from './types.js';
export { CHECK_VERDICTS } from './types.js';
export { FLOATS_DEFAULT_TOLERANCE } from './floats.js';
export { KATTIS_FLAGS, kattisOptions, ValidatorFlagsError, type Dialect } from './kattis.js';

export const BUILTIN_CHECKERS = {
  lines: (data: CheckData) => lines(data),
  exact: (data: CheckData) => exact(data),
  tokens: (data: CheckData, options: TokensOptions) => tokens(data, options),
  floats: (data: CheckData, options: FloatsOptions) => floats(data, options),
  unordered_lines: (data: CheckData) => unorderedLines(data),
  kattis: (data: CheckData, flags: readonly string[]) => kattis(data, kattisOptions(flags)),
  domjudge: (data: CheckData, flags: readonly string[]) => kattis(data, kattisOptions(flags, 'domjudge')),
} as const;

export type BuiltinCheckerType = keyof typeof BUILTIN_CHECKERS;
export const BUILTIN_CHECKER_TYPES = Object.keys(BUILTIN_CHECKERS) as BuiltinCheckerType[];
/** The comparison of a test when the request names none (Judge0's). */
export const DEFAULT_CHECKER: BuiltinCheckerType = 'lines';

/** A built-in checker as a request names it (and a setting keeps it). */
export type BuiltinChecker =
  | { type: 'lines' | 'exact' | 'unordered_lines' }
  | { type: 'tokens'; case_sensitive?: boolean }
  | ({ type: 'floats'; case_sensitive?: boolean } & FloatsOptions)
  | { type: 'kattis' | 'domjudge'; flags?: string[] };

export function checkBuiltin(checker: BuiltinChecker, data: CheckData): CheckResult {
  switch (checker.type) {
    case 'tokens':
      return BUILTIN_CHECKERS.tokens(data, { caseSensitive: checker.case_sensitive ?? true });
    case 'floats':
      return BUILTIN_CHECKERS.floats(data, { absolute: checker.absolute, relative: checker.relative, caseSensitive: checker.case_sensitive ?? true });
    case 'kattis':
    case 'domjudge':
      try {
        return BUILTIN_CHECKERS[checker.type](data, checker.flags ?? []);
      } catch (err) {
        // Flags are checked when a request or package gives them; one kept from before is the checker's failure.
        if (err instanceof ValidatorFlagsError) return { verdict: 'checker_error', score: 0, message: err.message };
        throw err;
      }
    default:
      return BUILTIN_CHECKERS[checker.type](data);
  }
}
