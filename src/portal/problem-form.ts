import { ApiError } from '../api/errors.js';
import { validate } from '../api/middleware/json-body.js';
import { ProblemBody } from '../api/schemas.js';
import { problemFromJson } from '../problems/json.js';
import { ProblemInputError, type ProblemDraft } from '../problems/draft.js';

// The portal's problem form as the problem the API would take: its fields become a
// ProblemBody (the JSON that POST /api/v2/problems/ takes), checked by the same schema
// and read by the same problemFromJson, with the statement (Markdown) beside it.

/** The form's fields as sent back to it (a refused form keeps what was typed). */
export type ProblemFormValues = Record<string, string>;

/** Test slots a form shows at first, and at most (more are added one by one on the problem's page). */
export const FORM_TEST_SLOTS = 3;
export const FORM_TEST_SLOTS_MAX = 50;

export const FORM_CHECKERS = ['lines', 'exact', 'tokens', 'floats', 'unordered_lines', 'program'] as const;

export const testCount = (v: ProblemFormValues): number => {
  const n = Number(v['test_count']);
  return Number.isInteger(n) && n >= 1 ? Math.min(n, FORM_TEST_SLOTS_MAX) : FORM_TEST_SLOTS;
};

const num = (text: string | undefined, field: string): number | undefined => {
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new ProblemInputError(`${field} must be a number`);
  return n;
};

/** Text typed in a form's box: a browser sends its line ends as CRLF, a test's data means LF. */
export const typedText = (text: string | undefined): string => (text ?? '').replace(/\r\n/g, '\n');

/** The checker the form names, as the API's checker field. */
function checkerOf(v: ProblemFormValues): ProblemBody['checker'] {
  const type = v['checker'] || 'lines';
  if (type === 'floats') {
    const absolute = num(v['absolute'], 'The absolute tolerance');
    const relative = num(v['relative'], 'The relative tolerance');
    return { type, ...(absolute !== undefined ? { absolute } : {}), ...(relative !== undefined ? { relative } : {}) };
  }
  if (type === 'program') {
    if (!v['checker_code']?.trim()) throw new ProblemInputError("a checker program needs its code");
    return { type, compiler: v['checker_compiler'] ?? '', code: v['checker_code'], convention: (v['checker_convention'] || 'testlib') as 'testlib' };
  }
  return { type } as ProblemBody['checker'];
}

/** The form as a draft; throws ProblemInputError in the form's words. */
export function draftOfForm(v: ProblemFormValues): ProblemDraft {
  const tests: ProblemBody['tests'] = [];
  for (let i = 1; i <= testCount(v); i++) {
    const name = (v[`test_${i}_name`] ?? '').trim();
    const input = typedText(v[`test_${i}_input`]);
    const output = typedText(v[`test_${i}_output`]);
    // A slot left blank is no test.
    if (name === '' && input === '' && output === '') continue;
    tests.push({ ...(name !== '' ? { name } : {}), input, expected_output: output, sample: v[`test_${i}_sample`] === 'on' });
  }
  if (tests.length === 0) throw new ProblemInputError('give at least one test: its input and the output expected');
  const time = num(v['time'], 'The time limit');
  const memoryMb = num(v['memory'], 'The memory limit');
  const body = {
    name: (v['name'] ?? '').trim() || undefined,
    tests,
    checker: checkerOf(v),
    ...(time !== undefined || memoryMb !== undefined ? { limits: { ...(time !== undefined ? { time } : {}), ...(memoryMb !== undefined ? { memory: Math.round(memoryMb * 1024) } : {}) } } : {}),
  };
  let checked: ProblemBody;
  try {
    checked = validate<ProblemBody>(ProblemBody, JSON.parse(JSON.stringify(body)));
  } catch (err) {
    if (err instanceof ApiError) throw new ProblemInputError(err.message.replace(/^tests\.(\d+)\./, (_m, n: string) => `test ${Number(n) + 1}: `));
    throw err;
  }
  const statement = (v['statement'] ?? '').trim();
  return { ...problemFromJson(checked), ...(statement !== '' ? { statement: { format: 'markdown', text: v['statement']! } } : {}) };
}
