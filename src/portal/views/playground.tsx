import type { KeyListing } from '../../accounts/keys.js';
import type { CompilerAvailability } from '../../compilers/availability.js';
import type { ProblemSummary } from '../../problems/store.js';
import { optionForms } from '../../program/compiler-options.js';
import type { PlaygroundOutcome } from '../playground-run.js';
import { optionsHint, type PlaygroundProgram } from '../playground-request.js';
import { EDITING_HINT, shownTest, testLabel, verdictText } from '../verdicts.js';
import { CsrfField, Layout, type PageContext } from './layout.js';
import { JudgedTests, ReturnedFiles } from './run-parts.js';

// The playground: a plain HTML form that works without JavaScript (each button posts
// it: Run, Add a file, Remove, Add a test; the server runs it and answers with this page
// and the result). With JavaScript (src/browser/playground) the files become tabs with a
// code editor each, and a run that is not judged goes over the API's WebSocket, its
// output streaming, naming the chosen key by its id (the portal session vouches for it:
// keys are stored only as hashes, so the page never holds one). Judged runs (tests with
// expected outputs, or a stored problem) are posted as the form is, and this page's
// result section is shown. Each compiler's sample is the hello program of its recipe.

export interface PlaygroundForm extends PlaygroundProgram {
  keyId: string;
}

export function PlaygroundPage(p: {
  page: PageContext;
  compilers: CompilerAvailability[];
  keys: KeyListing[];
  problems: ProblemSummary[];
  base: string;
  form: PlaygroundForm | null;
  outcome?: PlaygroundOutcome | undefined;
  /** The answer to a posted form (no JavaScript): the script keeps it rather than the session's saved program. */
  posted?: boolean;
}) {
  const available = p.compilers.filter((c) => c.available);
  return (
    <Layout title="Playground" page={p.page} scripts={['playground.js']}>
      {p.keys.length === 0 ? (
        <p>
          The playground runs through one of your API keys. <a href="/keys/new">Create a key</a> first.
        </p>
      ) : available.length === 0 || !p.form ? (
        <p>No compiler is installed on this service yet: the operator installs them with <code>runbox-admin image build</code>.</p>
      ) : (
        <PlaygroundForm {...p} available={available} form={p.form} />
      )}
    </Layout>
  );
}

function PlaygroundForm(p: { page: PageContext; available: CompilerAvailability[]; keys: KeyListing[]; problems: ProblemSummary[]; form: PlaygroundForm; outcome?: PlaygroundOutcome | undefined; posted?: boolean | undefined }) {
  const { form } = p;
  const chosen = p.available.find((c) => c.id === form.compiler) ?? p.available[0]!;
  const forms = optionForms(chosen.entry);
  return (
    <form class="stack playground" id="playground" method="post" action="/playground#pg-result" data-ws-path="/api/v2/ws/" data-posted={p.posted ? 'true' : undefined}>
      <CsrfField token={p.page.csrf} />
      {/* The form's default button (Enter in a one-line field): Run, not Add or Remove. */}
      <button type="submit" name="op" value="run" class="default-action" tabIndex={-1} aria-hidden="true" />
      <div>
        <label for="pg-key">Key</label>
        <select id="pg-key" name="key_id" aria-describedby="pg-key-hint">
          {p.keys.map((k) => (
            <option value={k.id} selected={k.id === form.keyId}>{`${k.app_name} (${k.key_prefix}…)`}</option>
          ))}
        </select>
        <p class="hint" id="pg-key-hint">
          Runs count against this key and your account, like any run.
        </p>
      </div>
      <div>
        <label for="pg-compiler">Compiler</label>
        <select id="pg-compiler" name="compiler" aria-describedby="pg-compiler-hint">
          {p.available.map((c) => (
            <option value={c.id} selected={c.id === chosen.id} data-sample={c.entry.hello.code} data-source={c.entry.source} data-options={optionForms(c.entry).join('\n')}>
              {`${c.id} — ${c.language} ${c.version ?? ''}`}
            </option>
          ))}
        </select>
        <p class="hint" id="pg-compiler-hint">
          Choosing a compiler loads its sample program, unless you have changed the code.
        </p>
      </div>
      <fieldset class="files" aria-describedby="pg-code-hint">
        <legend>Files</legend>
        <div id="pg-tabs" class="file-tabs" aria-label="Files" hidden />
        {form.files.map((f, i) => (
          <FilePanel index={i} name={f.name} content={f.content} main={i === form.main} removable={form.files.length > 1} />
        ))}
        {/* What "Add a file" adds, in the browser (the server adds the same without JavaScript). */}
        <template id="pg-file-template">
          <FilePanel index={-1} name="" content="" main={false} removable />
        </template>
        <p class="hint" id="pg-code-hint">
          {`${EDITING_HINT} The main file is the program; the others are beside it in its directory (paths like src/util.py make directories).`}
        </p>
        <div class="actions">
          <button type="submit" name="op" value="add-file" class="secondary" id="pg-add-file">
            Add a file
          </button>
        </div>
      </fieldset>
      <div>
        <label for="pg-args">Arguments</label>
        <textarea id="pg-args" name="args" rows={2} spellcheck={false} class="mono" aria-describedby="pg-args-hint">
          {form.args}
        </textarea>
        <p class="hint" id="pg-args-hint">
          One argument per line, given to the program as its command-line arguments (argv; no shell splits or expands them).
        </p>
      </div>
      <div id="pg-options-row">
        <label for="pg-options">Compiler options</label>
        <input id="pg-options" name="compiler_options" type="text" spellcheck={false} autoComplete="off" class="mono" value={form.options} aria-describedby="pg-options-hint" />
        <p class="hint" id="pg-options-hint">
          {optionsHint(chosen.id, forms)}
        </p>
      </div>
      <div>
        <label for="pg-input">Standard input</label>
        <textarea id="pg-input" name="input" rows={3} spellcheck={false} class="mono" aria-describedby="pg-input-hint">
          {form.input}
        </textarea>
        <p class="hint" id="pg-input-hint">
          Given to the program up front, and its input ends there. Leave it empty to type input under the output while the program runs.
        </p>
      </div>
      <fieldset class="judging">
        <legend>Judging</legend>
        <div>
          <label for="pg-problem">Problem</label>
          <select id="pg-problem" name="problem" aria-describedby="pg-problem-hint">
            <option value="">None</option>
            {p.problems.map((pr) => (
              <option value={pr.id} selected={pr.id === form.problem}>{`${pr.name} (${pr.test_count} ${pr.test_count === 1 ? 'test' : 'tests'})`}</option>
            ))}
          </select>
          <p class="hint" id="pg-problem-hint">
            {p.problems.length === 0 ? (
              <>
                Judge the program against one of your stored problems: <a href="/problems">upload one</a> first.
              </>
            ) : (
              'Judge the program against every test of one of your stored problems, with its checker and limits.'
            )}
          </p>
        </div>
        <div id="pg-tests">
          {form.tests.map((t, i) => (
            <TestPanel index={i} input={t.input} expected={t.expected} />
          ))}
        </div>
        <template id="pg-test-template">
          <TestPanel index={-1} input="" expected="" />
        </template>
        <p class="hint" id="pg-tests-hint">
          With tests, each runs with its input and its output is compared with the expected output, line by line (trailing spaces and empty lines aside); the Standard input box is not used.
        </p>
        <div class="actions">
          <button type="submit" name="op" value="add-test" class="secondary" id="pg-add-test" aria-describedby="pg-tests-hint">
            Add a test
          </button>
          <button type="submit" name="from" value="playground" class="secondary" id="pg-save-problem" formAction="/problems/new" formMethod="post" formNoValidate>
            Save as problem
          </button>
        </div>
      </fieldset>
      <div class="actions">
        <button type="submit" name="op" value="run" id="pg-run">
          Run
        </button>
        <button type="button" id="pg-stop" class="secondary" aria-disabled="true">
          Stop
        </button>
      </div>
      <Result outcome={p.outcome} />
    </form>
  );
}

function FilePanel(p: { index: number; name: string; content: string; main: boolean; removable: boolean }) {
  const i = p.index < 0 ? '__i__' : String(p.index);
  const label = p.name ? `Code of ${p.name}` : 'Code';
  return (
    <div class="file" data-file>
      <div class="file-head">
        <div class="file-name">
          <label for={`pg-file-name-${i}`}>File name</label>
          <input id={`pg-file-name-${i}`} name="file_name" type="text" value={p.name} spellcheck={false} autoComplete="off" class="mono" required />
        </div>
        <label class="check">
          <input type="radio" name="main" value={i} checked={p.main} /> Main file
        </label>
        <button type="submit" name="op" value={`remove-file:${i}`} class="secondary remove" hidden={!p.removable}>
          Remove file
        </button>
      </div>
      <label for={`pg-code-${i}`} class="code-label">
        {label}
      </label>
      <textarea id={`pg-code-${i}`} name="file_content" rows={12} spellcheck={false} class="mono code" aria-describedby="pg-code-hint">
        {p.content}
      </textarea>
    </div>
  );
}

function TestPanel(p: { index: number; input: string; expected: string }) {
  const i = p.index < 0 ? '__i__' : String(p.index);
  const n = p.index < 0 ? '__n__' : String(p.index + 1);
  return (
    <div class="test" data-test>
      <h3 class="test-title">{`Test ${n}`}</h3>
      <div class="test-pair">
        <div>
          <label for={`pg-test-input-${i}`}>{`Input of test ${n}`}</label>
          <textarea id={`pg-test-input-${i}`} name="test_input" rows={3} spellcheck={false} class="mono">
            {p.input}
          </textarea>
        </div>
        <div>
          <label for={`pg-test-expected-${i}`}>{`Expected output of test ${n}`}</label>
          <textarea id={`pg-test-expected-${i}`} name="test_expected" rows={3} spellcheck={false} class="mono">
            {p.expected}
          </textarea>
        </div>
      </div>
      <button type="submit" name="op" value={`remove-test:${i}`} class="secondary remove">
        {`Remove test ${n}`}
      </button>
    </div>
  );
}

/** The result section: output, the input line of an interactive run (shown by the script), the verdict, files, judged tests. */
function Result(p: { outcome?: PlaygroundOutcome | undefined }) {
  const o = p.outcome;
  const r = o?.ok ? o.result : undefined;
  return (
    <section id="pg-result" aria-labelledby="output-h">
      <h2 id="output-h">Output</h2>
      <p id="pg-output-of" class="muted">
        {o?.ok && o.tests && o.tests.length > 0 && shownTest(o.tests) >= 0 ? `The output of ${testLabel(o.tests[shownTest(o.tests)]!.name, shownTest(o.tests))}${o.tests.length > 1 ? `, the ${o.tests[shownTest(o.tests)]!.verdict === 'accepted' ? 'last test run' : 'first test not accepted'}` : ''}:` : ''}
      </p>
      <pre id="output" role="log" aria-live="polite" aria-labelledby="output-h" tabIndex={0}>
        {r?.output}
        {r?.error ? <span class="stderr">{r.error}</span> : null}
      </pre>
      <div id="pg-line" class="stdin-line" hidden>
        <label for="pg-line-input">Input to the program (Enter sends a line, Ctrl+D ends input)</label>
        <div class="actions">
          <input id="pg-line-input" type="text" autoComplete="off" spellcheck={false} class="mono" />
          <button type="button" id="pg-eof" class="secondary">
            End input
          </button>
        </div>
      </div>
      <p id="verdict" role="status" data-status={o ? (o.ok ? o.result.status : 'refused') : undefined}>
        {o ? (o.ok ? verdictText(o.result) : o.message) : ''}
      </p>
      <div id="pg-files">{r && <ReturnedFiles files={r.files} dropped={r.files_truncated ? r.files_dropped : undefined} />}</div>
      <div id="pg-judged">
        {o?.ok && o.tests && o.tests.length > 0 ? (
          <>
            <JudgedTests tests={o.tests} />
            <p>
              <a href={`/submissions/${o.submissionId}`}>The submission</a>, with each test's input and output.
            </p>
          </>
        ) : null}
      </div>
    </section>
  );
}
