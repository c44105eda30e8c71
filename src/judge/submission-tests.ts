import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { TestCaseRow } from '../db/schema.js';
import { REQUEST_LIMITS } from '../limits.js';
import type { RunResult, TestResult } from '../result.js';
import { outputText } from '../util/output-text.js';
import { UUID } from '../util/uuid.js';
import { resultFor, shownTo, type Asker } from '../problems/feedback.js';
import { firstLineDiff, type LineDiff } from './diff.js';

// A judged submission's tests as a page shows them (the portal's submission page):
// each test's verdict, score and message, its input and expected output (the first
// 100,000 bytes; a stored problem's while its version is kept) beside the output the
// result kept, and the first lines where the two differ.

export interface JudgedTestView {
  name: string | null;
  verdict: TestResult['verdict'] | null;
  score: number | null;
  checker_message: string | null;
  input: string | null;
  expected_output: string | null;
  output: string;
  /** Null when the two agree line by line (or the expected output is not known). */
  diff: LineDiff | null;
  /** A multi-pass problem's test: the passes it took. */
  passes?: number;
}

const SHOWN = REQUEST_LIMITS.inputMaxBytes;

/**
 * The asker's account's judged submission's tests, as the asker may see them (another
 * account's public problem under its feedback: a hidden test's input, expected output
 * and output are not shown); undefined when it is not the account's, not ended or not judged.
 */
export async function judgedTests(db: Db, asker: Asker, submissionId: string): Promise<JudgedTestView[] | undefined> {
  if (!UUID.test(submissionId)) return undefined;
  const accountId = asker.accountId;
  const row = await db
    .selectFrom('submissions')
    .select(['input', 'tests', 'run_options', 'result'])
    .where('id', '=', submissionId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  const stored = row?.result as RunResult | null | undefined;
  const judge = row?.run_options?.judge;
  if (!row || !stored || !judge || stored.verdict === undefined) return undefined;
  const result = await resultFor(db, asker, stored);
  let given: { name?: string; input: string | null; expected: string | null }[];
  if (judge.problem) {
    const shown = await shownTo(db, asker, judge.problem);
    // Under a withholding feedback only a shown sample's data is read at all.
    const dataShown = shown.feedback === 'full' ? sql`true` : shown.feedback === 'samples' ? sql`t.sample` : sql`false`;
    const { rows } = await sql<{ name: string; sample: boolean; input: Buffer | null; answer: Buffer | null }>`
      SELECT t.name, t.sample, substring(i.content from 1 for ${SHOWN}) AS input, substring(a.content from 1 for ${SHOWN}) AS answer
      FROM problem_tests t
        LEFT JOIN test_data i ON i.hash = t.input_hash AND ${dataShown}
        LEFT JOIN test_data a ON a.hash = t.answer_hash AND ${dataShown}
      WHERE t.problem_id = ${judge.problem.id} AND t.version = ${judge.problem.version}
      ORDER BY t.ordinal`.execute(db);
    const text = (b: Buffer | null) => (b === null ? null : outputText(b, b.length >= SHOWN));
    given = rows.map((r) => ({ name: r.name, input: text(r.input), expected: text(r.answer) }));
    // The tests a withholding feedback leaves (first_failure: one, verdict: none) are found by name.
    if (shown.feedback !== 'full' && result.tests) {
      const byName = new Map(given.map((g) => [g.name, g]));
      given = result.tests.map((t) => byName.get(t.name) ?? { input: null, expected: null });
    }
  } else if (row.tests) {
    given = (row.tests as TestCaseRow[]).map((t) => ({ input: t.input, expected: t.expected_output ?? null }));
  } else {
    given = [{ input: row.input, expected: judge.expected_output ?? null }];
  }
  const tests: TestResult[] = result.tests ?? [{ ...result, name: undefined } as unknown as TestResult];
  return tests.map((t, i) => {
    const expected = given[i]?.expected ?? null;
    return {
      name: t.name ?? null,
      verdict: t.verdict ?? null,
      score: t.score ?? null,
      checker_message: t.checker_message ?? null,
      input: given[i]?.input ?? null,
      expected_output: expected,
      output: t.output,
      // A multi-pass test's output is its last pass's, and its answer file no expected output of it.
      diff: expected === null || t.status !== 'success' || t.passes !== undefined ? null : firstLineDiff(expected, t.output),
      ...(t.passes !== undefined ? { passes: t.passes } : {}),
    };
  });
}
