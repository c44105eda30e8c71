import type { CheckResult } from './checkers/index.js';

// A multi-pass problem's test (the ICPC format's `type: multi-pass`, legacy `validation:
// custom multi-pass`; DOMjudge's judgedaemon runs it the same way): the program runs, its
// output validator (or interactor) judges the pass, and a validator that accepts and
// writes nextpass.in into its feedback directory asks for another pass, whose input
// that file is (the program's stdin, and the validator's input file, as DOMjudge gives
// it: hangman's and jumble's validators read the pass's input there). Every other file
// of the feedback directory stays from pass to pass; nextpass.in is taken out. Limits
// apply to each pass. The spec's judge errors: nextpass.in with any ending but 42, and
// a request for more passes than validation_passes (default 2).

/** The feedback file that asks for another pass, and its input. */
export const NEXT_PASS_FILE = 'nextpass.in';

/** The default of validation_passes (2025-09, 'Multi-pass limit'). */
export const DEFAULT_VALIDATION_PASSES = 2;

/** One pass as the runner ran it: the program's run, then its judging. */
export type PassOutcome<R> =
  /** The program did not succeed (or an interactive pass ended on the program's side): the test ends with this verdict. */
  | { ended: R }
  /** The validator's word on the pass and its feedback directory as it left it. */
  | { run: R; check: CheckResult; feedback: Record<string, Buffer> };

export interface MultiPassResult<R> {
  /** The last pass's run (or its ending). */
  last: R;
  /** Its verdict: null when the program's run ended the test (its status is the verdict). */
  check: CheckResult | null;
  /** The passes that ran. */
  passes: number;
}

const judgeError = (message: string): CheckResult => ({ verdict: 'checker_error', score: 0, message });

/**
 * Runs the passes of one test: `pass(input, feedback, n)` runs pass n with that input,
 * the feedback directory starting with the files the previous pass left.
 */
export async function multiPass<R>(input: Buffer, passes: number, pass: (input: Buffer, feedback: Record<string, Buffer>, n: number) => Promise<PassOutcome<R>>): Promise<MultiPassResult<R>> {
  let feedback: Record<string, Buffer> = {};
  for (let n = 1; ; n++) {
    const outcome = await pass(input, feedback, n);
    if ('ended' in outcome) return { last: outcome.ended, check: null, passes: n };
    const { [NEXT_PASS_FILE]: next, ...kept } = outcome.feedback;
    if (next === undefined) return { last: outcome.run, check: outcome.check, passes: n };
    if (outcome.check.verdict === 'checker_error') return { last: outcome.run, check: outcome.check, passes: n };
    if (outcome.check.verdict === 'wrong_answer') {
      return { last: outcome.run, check: judgeError(`the validator wrote ${NEXT_PASS_FILE} and rejected the pass (exit 43); another pass is asked for with exit 42 only${withMessage(outcome.check)}`), passes: n };
    }
    if (n >= passes) {
      return { last: outcome.run, check: judgeError(`the validator asked for pass ${n + 1}; the problem's validation_passes is ${passes}${withMessage(outcome.check)}`), passes: n };
    }
    input = next;
    feedback = kept;
  }
}

const withMessage = (c: CheckResult) => (c.message ? `: ${c.message}` : '');
