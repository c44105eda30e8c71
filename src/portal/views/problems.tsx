import type { ProblemSummary, ProblemView, Storage } from '../../problems/store.js';
import type { GradedLine } from '../../grading/list.js';
import { PROBLEM_LIMITS } from '../../limits.js';
import { moreText, type Page } from '../../util/pages.js';
import type { TestContent, VersionLine } from '../../problems/edit.js';
import { GradedTable } from './grading.js';
import { AllTests, ChangeForms, ProblemIdField, Statement, Versions } from './problem-forms.js';
import { sizeText } from '../returned-files.js';
import { CsrfField, Figure, Layout, TableBox, TextPair, When, type Notice, type PageContext } from './layout.js';

// The account's stored problems: the list with the form that uploads a package, one
// problem with its tests (samples' content shown, the others by size), and deleting one.

const MiB = 1024 * 1024;

export function ProblemsPage(p: { page: PageContext; problems: ProblemSummary[]; storage: Storage; error?: string | undefined; notices?: Notice[]; already?: { id: string; name: string } | undefined }) {
  return (
    <Layout title="Problems" page={p.page} notices={p.notices}>
      <p>
        A problem keeps tests (inputs and expected outputs), a checker and limits once, for every run to be judged against: name it in a run request
        (<code>"problem": "ID"</code>) or pick it in the <a href="/playground">Playground</a>.
      </p>
      {p.already && (
        <p class="notice warn" role="alert" data-field="already-stored">
          {'This package is already stored, as '}
          <a href={`/problems/${p.already.id}`}>{p.already.name}</a>
          {'. Nothing was stored again; to change that problem, upload the package on its page as a new version.'}
        </p>
      )}
      <p>
        <a class="button" href="/problems/new">
          New problem…
        </a>{' '}
        Write the statement and type the tests in a form, or upload a package below.
      </p>
      <p data-field="storage">{`Test data kept: ${sizeText(p.storage.used_bytes)} of ${sizeText(p.storage.limit_bytes)} your plan allows.`}</p>
      {p.problems.length === 0 ? (
        <p>No problems yet.</p>
      ) : (
        <TableBox label="Problems">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col" class="num">Tests</th>
                <th scope="col" class="num">Test data</th>
                <th scope="col" class="num">Version</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {p.problems.map((pr) => (
                <tr data-problem-id={pr.id}>
                  <td>
                    <a href={`/problems/${pr.id}`}>{pr.name}</a>
                  </td>
                  <td class="num">{pr.test_count}</td>
                  <td class="num">{sizeText(pr.data_bytes)}</td>
                  <td class="num">{pr.version}</td>
                  <td>
                    <When d={pr.updated_at} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      <h2 id="upload-h">Upload a problem package</h2>
      <form class="stack problem-upload" method="post" action="/problems" encType="multipart/form-data" aria-labelledby="upload-h">
        <CsrfField token={p.page.csrf} />
        <div>
          <label for="f-package">Package (zip)</label>
          <input
            id="f-package"
            name="package"
            type="file"
            accept=".zip,application/zip"
            required
            aria-describedby={`f-package-hint${p.error ? ' f-package-error' : ''}`}
            aria-invalid={p.error ? 'true' : undefined}
            autoFocus={p.error !== undefined}
          />
          <p class="hint" id="f-package-hint">
            {`The ICPC/Kattis layout (problem.yaml, data/sample/*.in + .ans, data/secret/*.in + .ans, output_validators/) or tests/NAME.in + tests/NAME.out, with an optional checker/ or interactor/. At most ${PROBLEM_LIMITS.uploadMaxBytes / MiB} MiB, a test file at most ${PROBLEM_LIMITS.testFileMaxBytes / MiB} MiB.`}{' '}
            <a href="/docs/api#stored-problems">What a package holds</a>
          </p>
          {p.error && (
            <p class="field-error" id="f-package-error" role="alert">
              {p.error}
            </p>
          )}
        </div>
        <div>
          <button type="submit">Upload</button>
        </div>
      </form>
    </Layout>
  );
}

function checkerText(c: ProblemView['checker']): string {
  if (c.type === 'program') return `a checker program (${String(c['compiler'])}, ${String(c['convention'])} convention: ${((c['files'] as string[] | undefined) ?? []).join(', ')})`;
  const options = Object.entries(c)
    .filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k} ${String(v)}`);
  return `${c.type}${options.length > 0 ? ` (${options.join(', ')})` : ''}`;
}

export function ProblemPage(p: { page: PageContext; problem: ProblemView; notices?: Notice[]; submissions?: Page<GradedLine>; owner?: { tests: TestContent[]; versions: VersionLine[] } }) {
  const pr = p.problem;
  const samples = pr.tests.filter((t) => t.input !== undefined || t.expected_output !== undefined);
  return (
    <Layout title={pr.name} page={p.page} notices={p.notices} scripts={['portal.js']}>
      <ProblemIdField id={pr.id} />
      <dl class="figures">
        <Figure label="Tests" field="test_count" value={pr.test_count} />
        <Figure label="Version" field="version" value={pr.version} />
        <Figure label="Test data" value={sizeText(pr.data_bytes)} />
        <Figure label="Time limit" value={pr.limits.time !== undefined ? `${pr.limits.time} s` : "The service's"} />
        <Figure label="Memory limit" value={pr.limits.memory !== undefined ? `${Math.round(pr.limits.memory / 1024)} MB` : "The service's"} />
      </dl>
      <p data-field="checker">Output compared by: {checkerText(pr.checker)}.</p>
      {pr.interactor && <p data-field="interactor">{`Interactive: an interactor (${pr.interactor.compiler}, ${pr.interactor.convention} convention: ${pr.interactor.files.join(', ')}).`}</p>}
      <p>
        Created <When d={pr.created_at} />, updated <When d={pr.updated_at} />.
      </p>
      <Statement problem={pr} />
      <h2>Tests</h2>
      <TableBox label="Tests">
        <table>
          <thead>
            <tr>
              <th scope="col">Test</th>
              <th scope="col">Sample</th>
              <th scope="col" class="num">Weight</th>
              <th scope="col" class="num">Input</th>
              <th scope="col" class="num">Expected output</th>
            </tr>
          </thead>
          <tbody>
            {pr.tests.map((t) => (
              <tr data-test={t.name}>
                <th scope="row" class="mono">
                  {t.name}
                </th>
                <td>{t.sample ? 'Sample' : '—'}</td>
                <td class="num">{t.weight}</td>
                <td class="num">{sizeText(t.input_bytes)}</td>
                <td class="num">{sizeText(t.expected_output_bytes)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
      {samples.length > 0 && <h2>Samples</h2>}
      {samples.map((t, i) => (
        <section class="sample" aria-labelledby={`sample-${i}`}>
          <h3 id={`sample-${i}`} class="mono">
            {t.name}
          </h3>
          <TextPair
            sides={[
              { label: 'Input', ariaLabel: `${t.name}, input`, text: t.input ?? `(${sizeText(t.input_bytes)}: too long to show)` },
              { label: 'Expected output', ariaLabel: `${t.name}, expected output`, text: t.expected_output ?? `(${sizeText(t.expected_output_bytes)}: too long to show)` },
            ]}
          />
        </section>
      ))}
      {p.owner && <AllTests tests={p.owner.tests} />}
      {p.submissions && <ProblemSubmissions id={pr.id} list={p.submissions} />}
      {p.owner && <Versions versions={p.owner.versions} />}
      {p.owner && <ChangeForms page={p.page} id={pr.id} testNames={pr.tests.map((t) => t.name)} />}
      <h2>Delete</h2>
      <p>Runs already queued still finish; the test data goes once nothing needs it.</p>
      <p>
        <a class="button secondary" href={`/problems/${pr.id}/delete`}>
          Delete problem…
        </a>
      </p>
      <p>
        <a href="/problems">Back to problems</a>
      </p>
    </Layout>
  );
}

/** The problem's newest submissions, with the grading list's columns, and the way to all of them. */
function ProblemSubmissions(p: { id: string; list: Page<GradedLine> }) {
  return (
    <section aria-labelledby="submissions-h">
      <h2 id="submissions-h">Submissions</h2>
      {p.list.items.length === 0 ? <p>No runs of this problem yet.</p> : <GradedTable items={p.list.items} showProblem={false} />}
      <p>
        <a href={`/submissions?problem=${p.id}`}>{p.list.more > 0 ? `All submissions of this problem (${moreText(p.list, 'older')})` : 'Filter and export these submissions'}</a>
      </p>
    </section>
  );
}

export function DeleteProblemPage(p: { page: PageContext; problem: ProblemSummary }) {
  return (
    <Layout title={`Delete ${p.problem.name}?`} page={p.page}>
      <p>{`Runs can no longer name this problem (${p.problem.test_count} tests). This cannot be undone.`}</p>
      <form method="post" action={`/problems/${p.problem.id}/delete`} class="actions">
        <CsrfField token={p.page.csrf} />
        <button type="submit" class="danger">
          Delete problem
        </button>
        <a href={`/problems/${p.problem.id}`}>Cancel</a>
      </form>
    </Layout>
  );
}
