import type { TestContent, VersionLine } from '../../problems/edit.js';
import type { ProblemView } from '../../problems/store.js';
import { PROBLEM_LIMITS } from '../../limits.js';
import { fmtCount } from '../format.js';
import { Markdown } from '../markdown.js';
import { FORM_CHECKERS, testCount, type ProblemFormValues } from '../problem-form.js';
import { sizeText } from '../returned-files.js';
import { CsrfField, Layout, TableBox, TextPair, When, type PageContext } from './layout.js';

// Making and keeping a problem in the portal: the form that makes one (name, statement
// in Markdown, limits, comparison or checker program, tests typed in), the form that
// edits one (its next version), adding or replacing a test, uploading a new version, and
// what its page shows its owner (statement, id to copy, every test's content, versions).

const CHECKER_WORDS: Record<(typeof FORM_CHECKERS)[number], string> = {
  lines: 'Lines (trailing spaces and empty lines ignored)',
  exact: 'Exactly the same bytes',
  tokens: 'Tokens (words and numbers, any spacing)',
  floats: 'Numbers within a tolerance',
  unordered_lines: 'The same lines in any order',
  program: 'A checker program',
};

function FieldError(p: { error?: string | undefined }) {
  return p.error ? (
    <p class="field-error" id="f-form-error" role="alert">
      {p.error}
    </p>
  ) : null;
}

/** The problem's settings (name, statement, limits, checker): in the new form, and in the edit form. */
function SettingsFields(p: { v: ProblemFormValues; compilers: string[] }) {
  const v = p.v;
  const checker = v['checker'] || 'lines';
  return (
    <>
      <div>
        <label for="f-name">Name</label>
        <input id="f-name" name="name" type="text" required maxLength={PROBLEM_LIMITS.nameMaxBytes} value={v['name'] ?? ''} />
      </div>
      <div>
        <label for="f-statement">Statement (Markdown)</label>
        <textarea id="f-statement" name="statement" rows={8} aria-describedby="f-statement-hint">
          {v['statement'] ?? ''}
        </textarea>
        <p class="hint" id="f-statement-hint">
          Headings (#), lists, `code`, **bold**, *italics*, [links](https://…) and ``` blocks. Tests marked Sample are shown under it with their input and expected output.
        </p>
      </div>
      <div class="pair">
        <div>
          <label for="f-time">Time limit (CPU seconds per test)</label>
          <input id="f-time" name="time" type="number" step="any" min="0" value={v['time'] ?? ''} aria-describedby="f-limits-hint" />
        </div>
        <div>
          <label for="f-memory">Memory limit (MB per test)</label>
          <input id="f-memory" name="memory" type="number" step="1" min="1" value={v['memory'] ?? ''} aria-describedby="f-limits-hint" />
        </div>
      </div>
      <p class="hint" id="f-limits-hint">
        Empty: the service's limits.
      </p>
      <fieldset>
        <legend>How outputs are compared</legend>
        {FORM_CHECKERS.map((c) => (
          <label class="check">
            <input type="radio" name="checker" value={c} checked={checker === c} /> {CHECKER_WORDS[c]}
          </label>
        ))}
        <div class="pair">
          <div>
            <label for="f-absolute">Absolute tolerance (numbers)</label>
            <input id="f-absolute" name="absolute" type="text" inputMode="decimal" value={v['absolute'] ?? ''} placeholder="1e-6" />
          </div>
          <div>
            <label for="f-relative">Relative tolerance (numbers)</label>
            <input id="f-relative" name="relative" type="text" inputMode="decimal" value={v['relative'] ?? ''} placeholder="1e-6" />
          </div>
        </div>
        <div>
          <label for="f-checker-compiler">Checker program's compiler</label>
          <select id="f-checker-compiler" name="checker_compiler">
            {p.compilers.map((id) => (
              <option value={id} selected={v['checker_compiler'] === id}>
                {id}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="f-checker-convention">Checker program's convention</label>
          <select id="f-checker-convention" name="checker_convention">
            <option value="testlib" selected={v['checker_convention'] !== 'kattis'}>
              testlib (checker input output answer; exit 0 accepted, 1 wrong)
            </option>
            <option value="kattis" selected={v['checker_convention'] === 'kattis'}>
              Kattis (input answer feedback_dir, output on stdin; exit 42 accepted, 43 wrong)
            </option>
          </select>
        </div>
        <div>
          <label for="f-checker-code">Checker program's code</label>
          <textarea id="f-checker-code" name="checker_code" class="code" rows={6} spellcheck={false}>
            {v['checker_code'] ?? ''}
          </textarea>
        </div>
      </fieldset>
    </>
  );
}

export function NewProblemPage(p: { page: PageContext; values: ProblemFormValues; compilers: string[]; error?: string | undefined; fromPlayground?: boolean }) {
  const v = p.values;
  const count = testCount(v);
  return (
    <Layout title="New problem" page={p.page}>
      {p.fromPlayground && <p class="notice info">The playground's tests are filled in below; name the problem and save it.</p>}
      <form class="stack problem-form" method="post" action="/problems/new" aria-describedby={p.error ? 'f-form-error' : undefined}>
        <CsrfField token={p.page.csrf} />
        <FieldError error={p.error} />
        <SettingsFields v={v} compilers={p.compilers} />
        <input type="hidden" name="test_count" value={String(count)} />
        <h2>Tests</h2>
        <p class="hint">A blank test is left out. Add more tests, or upload test files one by one, on the problem's page once it is saved.</p>
        {Array.from({ length: count }, (_, k) => k + 1).map((i) => (
          <fieldset class="test" aria-labelledby={`test-${i}-legend`}>
            <legend id={`test-${i}-legend`}>{`Test ${i}`}</legend>
            <div>
              <label for={`f-test-${i}-name`}>{`Test ${i} name (optional)`}</label>
              <input id={`f-test-${i}-name`} name={`test_${i}_name`} type="text" value={v[`test_${i}_name`] ?? ''} placeholder={String(i)} />
            </div>
            <div class="test-pair">
              <div>
                <label for={`f-test-${i}-input`}>{`Test ${i} input`}</label>
                <textarea id={`f-test-${i}-input`} name={`test_${i}_input`} rows={4} spellcheck={false}>
                  {v[`test_${i}_input`] ?? ''}
                </textarea>
              </div>
              <div>
                <label for={`f-test-${i}-output`}>{`Test ${i} expected output`}</label>
                <textarea id={`f-test-${i}-output`} name={`test_${i}_output`} rows={4} spellcheck={false}>
                  {v[`test_${i}_output`] ?? ''}
                </textarea>
              </div>
            </div>
            <label class="check">
              <input type="checkbox" name={`test_${i}_sample`} checked={v[`test_${i}_sample`] === 'on'} /> {`Test ${i} is a sample (shown with the statement)`}
            </label>
          </fieldset>
        ))}
        <div class="actions">
          <button type="submit">Save problem</button>
          <button type="submit" class="secondary" name="more" value="1" formNoValidate>
            Add a test slot
          </button>
          <a href="/problems">Cancel</a>
        </div>
      </form>
    </Layout>
  );
}

export function EditProblemPage(p: { page: PageContext; id: string; values: ProblemFormValues; compilers: string[]; keepsProgram: boolean; error?: string | undefined }) {
  return (
    <Layout title={`Edit ${p.values['name'] ?? 'problem'}`} page={p.page}>
      <p>Saving makes the problem's next version, with the same tests; runs name the version they ran.</p>
      <form class="stack problem-form" method="post" action={`/problems/${p.id}/edit`} aria-describedby={p.error ? 'f-form-error' : undefined}>
        <CsrfField token={p.page.csrf} />
        <FieldError error={p.error} />
        {p.keepsProgram && <input type="hidden" name="keep_checker" value="1" />}
        {p.keepsProgram && <p class="hint">The problem's checker or interactor program is kept unless you choose a comparison below.</p>}
        <SettingsFields v={p.values} compilers={p.compilers} />
        <div class="actions">
          <button type="submit">Save as the next version</button>
          <a href={`/problems/${p.id}`}>Cancel</a>
        </div>
      </form>
    </Layout>
  );
}

/** The id the API needs, with a copy button (portal.js). */
export function ProblemIdField(p: { id: string }) {
  return (
    <div class="secret">
      <label for="problem-id" class="visually-hidden">
        Problem id
      </label>
      <input id="problem-id" type="text" readOnly value={p.id} class="mono" aria-describedby="problem-id-hint" />
      <button type="button" class="secondary" data-copy="problem-id" aria-label="Copy problem id">
        Copy
      </button>
      <p class="hint" id="problem-id-hint">
        {'Name it in a run request as "problem": "…" (the API, the widget, the playground).'}
      </p>
    </div>
  );
}

export function Statement(p: { problem: ProblemView }) {
  const st = p.problem.statement;
  if (!st) return null;
  return (
    <section aria-labelledby="statement-h">
      <h2 id="statement-h">Statement</h2>
      {st.format === 'markdown' ? (
        <Markdown text={st.text} label="Statement" />
      ) : (
        <p>
          {'The statement is LaTeX: '}
          <a href={`/problems/${p.problem.id}/statement.tex`} download="problem.tex">
            download problem.tex
          </a>
          {` (${sizeText(Buffer.byteLength(st.text))}).`}
        </p>
      )}
    </section>
  );
}

/** Every test's input and expected output, as its owner sees them: samples open, the others folded, each with its sizes. */
export function AllTests(p: { tests: TestContent[] }) {
  return (
    <section aria-labelledby="all-tests-h">
      <h2 id="all-tests-h">Test data</h2>
      <p class="hint">Only you see the inputs and expected outputs of tests that are not samples.</p>
      {p.tests.map((t) => (
        <details class="test-data" data-test-data={t.name}>
          <summary>
            <span class="mono">{t.name}</span>
            {`${t.sample ? ' · sample' : ''} · input ${sizeText(t.input_bytes)}, expected output ${sizeText(t.expected_output_bytes)}${t.cut ? ' (first 100,000 bytes shown)' : ''}`}
          </summary>
          <TextPair
            sides={[
              { label: 'Input', ariaLabel: `${t.name}, input`, text: t.input },
              { label: 'Expected output', ariaLabel: `${t.name}, expected output`, text: t.expected_output },
            ]}
          />
        </details>
      ))}
    </section>
  );
}

export function Versions(p: { versions: VersionLine[] }) {
  return (
    <section aria-labelledby="versions-h">
      <h2 id="versions-h">Versions</h2>
      <TableBox label="Versions">
        <table>
          <thead>
            <tr>
              <th scope="col" class="num">Version</th>
              <th scope="col">Made</th>
              <th scope="col" class="num">Tests</th>
              <th scope="col" class="num">Submissions</th>
            </tr>
          </thead>
          <tbody>
            {p.versions.map((v) => (
              <tr data-version={v.version}>
                <th scope="row" class="num">
                  {v.current ? `${v.version} (current)` : String(v.version)}
                </th>
                <td>{v.created_at ? <When d={v.created_at} /> : 'Replaced; its tests are no longer kept'}</td>
                <td class="num">{v.tests === null ? '—' : fmtCount(v.tests)}</td>
                <td class="num">{fmtCount(v.submissions)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </section>
  );
}

/** Changing the problem: edit its settings, add or replace one test (typed or uploaded), upload a new version. */
export function ChangeForms(p: { page: PageContext; id: string; error?: string | undefined; testNames: string[] }) {
  return (
    <section aria-labelledby="change-h">
      <h2 id="change-h">Change</h2>
      <p>
        <a class="button secondary" href={`/problems/${p.id}/edit`}>
          Rename or edit…
        </a>
      </p>
      <h3 id="test-form-h">Add or replace a test</h3>
      <form class="stack" method="post" action={`/problems/${p.id}/tests`} encType="multipart/form-data" aria-labelledby="test-form-h">
        <CsrfField token={p.page.csrf} />
        {p.error && (
          <p class="field-error" role="alert">
            {p.error}
          </p>
        )}
        <div>
          <label for="f-t-name">Test name</label>
          <input id="f-t-name" name="name" type="text" required list="test-names" aria-describedby="f-t-name-hint" />
          <datalist id="test-names">
            {p.testNames.map((n) => (
              <option value={n} />
            ))}
          </datalist>
          <p class="hint" id="f-t-name-hint">
            A test's name replaces that test; a new name adds one.
          </p>
        </div>
        <div class="test-pair">
          <div>
            <label for="f-t-input">Input</label>
            <textarea id="f-t-input" name="input" rows={3} spellcheck={false} />
            <label for="f-t-input-file">or input file</label>
            <input id="f-t-input-file" name="input_file" type="file" />
          </div>
          <div>
            <label for="f-t-output">Expected output</label>
            <textarea id="f-t-output" name="output" rows={3} spellcheck={false} />
            <label for="f-t-output-file">or expected output file</label>
            <input id="f-t-output-file" name="output_file" type="file" />
          </div>
        </div>
        <label class="check">
          <input type="checkbox" name="sample" /> A sample (shown with the statement)
        </label>
        <div>
          <button type="submit">Save test (next version)</button>
        </div>
      </form>
      <h3 id="version-form-h">Upload a new version</h3>
      <form class="stack problem-upload" method="post" action={`/problems/${p.id}/version`} encType="multipart/form-data" aria-labelledby="version-form-h">
        <CsrfField token={p.page.csrf} />
        <div>
          <label for="f-version-package">Package (zip)</label>
          <input id="f-version-package" name="package" type="file" accept=".zip,application/zip" required />
        </div>
        <div>
          <button type="submit">Upload as the next version</button>
        </div>
      </form>
    </section>
  );
}
