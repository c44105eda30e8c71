// What every checker is: a function of the test's input, the program's output and the
// test's answer (its expected output) to a verdict, a score and a message. The built-in
// comparisons are pure functions of this shape; a checker program (program.ts) is the
// same function with a sandboxed stage behind it.

/** What a comparison can say of an output. A run that did not succeed is never compared. */
export const CHECK_VERDICTS = ['accepted', 'wrong_answer', 'presentation_error', 'partial', 'checker_error'] as const;
export type CheckVerdict = (typeof CHECK_VERDICTS)[number];

export interface CheckData {
  /** The test's input (what the program read). */
  input: Buffer;
  /** The program's whole stdout (up to the flood limit), not the 64 KB kept for the result. */
  output: Buffer;
  /** The test's expected output. */
  answer: Buffer;
}

export interface CheckResult {
  verdict: CheckVerdict;
  /** 0 to 1: 1 for accepted, 0 for wrong, in between for a checker's partial score. */
  score: number;
  /** The checker's words; empty when it has none. */
  message: string;
  /** A Kattis validator's score.txt and score_multiplier.txt as it wrote them, and whether it accepted (exit 42). */
  scoreFiles?: ScoreFiles;
}

export interface ScoreFiles {
  accepted: boolean;
  score?: string;
  multiplier?: string;
}

export const accepted = (message = ''): CheckResult => ({ verdict: 'accepted', score: 1, message });
export const wrongAnswer = (message: string): CheckResult => ({ verdict: 'wrong_answer', score: 0, message });
export const presentationError = (message: string): CheckResult => ({ verdict: 'presentation_error', score: 0, message });
