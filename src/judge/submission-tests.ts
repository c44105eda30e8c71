import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { TestCaseRow } from '../db/schema.js';
import { REQUEST_LIMITS } from '../limits.js';
import type { RunResult, TestResult } from '../result.js';
import { outputText } from '../util/output-text.js';
import { UUID } from '../util/uuid.js';
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

/** The account's judged submission's tests; undefined when it is not the account's, not ended or not judged. */
export async function judgedTests(db: Db, accountId: string, submissionId: string): Promise<JudgedTestView[] | undefined> {
  if (!UUID.test(submissionId)) return undefined;
  const row = await db
    .selectFrom('submissions')
    .select(['input', 'tests', 'run_options', 'result'])
    .where('id', '=', submissionId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  const result = row?.result as RunResult | null | undefined;
  const judge = row?.run_options?.judge;
  if (!row || !result || !judge || result.verdict === undefined) return undefined;
  let given: { input: string | null; expected: string | null }[];
  if (judge.problem) {
    const { rows } = await sql<{ input: Buffer | null; answer: Buffer | null }>`
      SELECT substring(i.content from 1 for ${SHOWN}) AS input, substring(a.content from 1 for ${SHOWN}) AS answer
      FROM problem_tests t LEFT JOIN test_data i ON i.hash = t.input_hash LEFT JOIN test_data a ON a.hash = t.answer_hash
      WHERE t.problem_id = ${judge.problem.id} AND t.version = ${judge.problem.version}
      ORDER BY t.ordinal`.execute(db);
    const text = (b: Buffer | null) => (b === null ? null : outputText(b, b.length >= SHOWN));
    given = rows.map((r) => ({ input: text(r.input), expected: text(r.answer) }));
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
