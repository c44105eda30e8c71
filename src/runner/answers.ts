import type { RunFile } from '../db/schema.js';
import { overallVerdict, SKIPPED, testVerdict, type Judged } from '../judge/verdict.js';
import { notRun, type RunResult, type TestResult } from '../result.js';
import { checkOutput, type Judging } from './judge.js';

// A submit-answer problem's submission (the ICPC format's type: submit-answer, CMS's
// output-only tasks): its files are the answers, test NAME's in NAME.out (secret/03's in
// secret/03.out, or 03.out when no other test's name ends the same), each judged by the
// problem's validator as a program's output would be. Nothing of the submission is built
// or run: a test has no run figures, and one without its file is wrong_answer.

/** The answer file of each test, by the test's name. */
export function answerFiles(testNames: readonly string[], files: readonly RunFile[]): Map<string, Buffer> {
  const byName = new Map(files.map((f) => [f.name, f]));
  const base = (name: string) => name.slice(name.lastIndexOf('/') + 1);
  const baseCount = new Map<string, number>();
  for (const n of testNames) baseCount.set(base(n), (baseCount.get(base(n)) ?? 0) + 1);
  const found = new Map<string, Buffer>();
  for (const n of testNames) {
    const file = byName.get(`${n}.out`) ?? (baseCount.get(base(n)) === 1 ? byName.get(`${base(n)}.out`) : undefined);
    if (file) found.set(n, Buffer.from(file.content_base64, 'base64'));
  }
  return found;
}

/** Judges the submission's answer files against every test. */
export async function judgeAnswers(j: Judging, base: Pick<RunResult, 'id' | 'compiler' | 'extra_params'>, files: RunFile[]): Promise<RunResult> {
  const answers = answerFiles(j.tests.map((t) => t.name ?? ''), files);
  const results: TestResult[] = [];
  let stopped = false;
  for (const t of j.tests) {
    const name = t.name ?? '';
    let judged: Judged;
    const output = answers.get(name);
    if (stopped) judged = SKIPPED;
    else if (!output) judged = { verdict: 'wrong_answer', score: 0, checker_message: `no answer file ${name}.out` };
    else judged = testVerdict('success', await checkOutput(j, t, { input: await t.input(), output, answer: await t.answer() }));
    results.push({ name, ...notRun(judged.verdict === 'skipped' ? 'skipped' : 'success'), ...judged });
    if (j.settings.stop_on_failure && judged.verdict !== 'accepted') stopped = true;
  }
  const overall = overallVerdict(results.map((res, i) => ({ verdict: res.verdict!, score: res.score!, checker_message: res.checker_message ?? null, weight: j.tests[i]!.weight })));
  const shown = results.find((res) => res.verdict !== 'accepted' && res.verdict !== 'skipped');
  return {
    ...base,
    ...notRun('success'),
    verdict: overall.verdict,
    score: overall.score,
    checker_message: shown?.checker_message ?? null,
    stdout_truncated: false,
    stderr_truncated: false,
    compile_output: null,
    ...(j.problem ? { problem: j.problem } : {}),
    tests: results,
  };
}
