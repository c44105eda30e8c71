import type { CheckView } from '../../api/problem-checks.js';
import { parseInteraction } from '../../problems/interaction.js';
import type { ProblemSummary, ProblemTestView, ProblemView, Storage } from '../../problems/store.js';
import { FEEDBACK_SETTINGS, type Feedback } from '../../problems/feedback.js';
import type { GradedLine } from '../../grading/list.js';
import { PROBLEM_LIMITS } from '../../limits.js';
import { moreText, type Page } from '../../util/pages.js';
import type { TestContent, VersionLine } from '../../problems/edit.js';
import { GradedTable } from './grading.js';
import { AllTests, ChangeForms, ProblemIdField, Statement, Versions } from './problem-forms.js';
import { sizeText } from '../returned-files.js';
import { CsrfField, Figure, Layout, TableBox, TextPair, When, type Notice, type PageContext } from './layout.js';
import { PackageReport } from './package-report.js';

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
        <FeedbackFields feedback="full" public={false} />
        <div>
          <button type="submit">Upload</button>
        </div>
      </form>
    </Layout>
  );
}

/** A multi-pass problem's validator: how many passes a test may take. */
const passesText = (passes: number | undefined) => (passes === undefined ? '' : `, multi-pass: up to ${passes} passes a test`);

function checkerText(c: ProblemView['checker']): string {
  if (c.type === 'program') return `a checker program (${String(c['compiler'])}, ${String(c['convention'])} convention: ${((c['files'] as string[] | undefined) ?? []).join(', ')})${passesText(c['passes'] as number | undefined)}`;
  const options = Object.entries(c)
    .filter(([k]) => k !== 'type')
    .map(([k, v]) => `${k} ${String(v)}`);
  return `${c.type}${options.length > 0 ? ` (${options.join(', ')})` : ''}`;
}

const TIME_SOURCE = { stated: 'stated by the package', derived: 'derived from the accepted submissions', default: 'the default: not measured yet (verify the package)' } as const;

/** A verification's report, or its progress while it runs. */
function Verification(p: { check: CheckView }) {
  const c = p.check;
  const judged = c.runs.filter((r) => r.state === 'finished' || r.state === 'failed' || r.state === 'refused').length;
  return (
    <>
      <p data-field="verification-state">
        {c.state === 'running'
          ? `Running: ${judged} of ${c.runs.length} submissions judged${c.phase === 1 && c.time_limit.source !== 'stated' ? ' (measuring the accepted ones first)' : ''}. Reload the page to follow it.`
          : `${
              c.mismatches === 0
                ? 'Done: every submission judged got the verdict expected'
                : `Done: ${c.mismatches} of ${c.runs.length - c.not_judged} submissions judged did not get the verdict expected`
            }${c.not_judged > 0 ? ` (${c.not_judged} could not be judged here)` : ''}; time limit ${c.time_limit.seconds} s (${c.time_limit.source}).`}
      </p>
      {c.time_limit.note && <p>{c.time_limit.note}</p>}
      <TableBox label="Example submissions">
        <table>
          <thead>
            <tr>
              <th scope="col">Submission</th>
              <th scope="col">Expected</th>
              <th scope="col">Verdict</th>
              <th scope="col" class="num">Time</th>
              <th scope="col">Mismatches</th>
            </tr>
          </thead>
          <tbody>
            {c.runs.map((r) => (
              <tr data-submission={r.path}>
                <th scope="row" class="mono">
                  {r.path}
                </th>
                <td>{(r.expected ?? []).join('; ')}</td>
                <td>{r.verdict ?? r.state}</td>
                <td class="num">{r.time !== null ? `${r.time} s` : '—'}</td>
                <td>{(r.mismatches ?? []).join('; ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </>
  );
}

/** A rejudge's verdicts that changed. */
function Rejudge(p: { check: CheckView }) {
  const changed = p.check.runs.filter((r) => r.changed);
  return (
    <>
      <p data-field="rejudge-state">
        {p.check.state === 'running'
          ? `Rejudging ${p.check.runs.length} submissions on version ${p.check.version}. Reload the page to follow it.`
          : `${p.check.runs.length} submissions rejudged on version ${p.check.version}: ${changed.length} verdicts changed.`}
      </p>
      {changed.length > 0 && (
        <TableBox label="Changed verdicts">
          <table>
            <thead>
              <tr>
                <th scope="col">Submission</th>
                <th scope="col">Before</th>
                <th scope="col">Now</th>
              </tr>
            </thead>
            <tbody>
              {changed.map((r) => (
                <tr>
                  <th scope="row" class="mono">
                    <a href={`/submissions/${r.submission_id}`}>{r.previous_id}</a>
                  </th>
                  <td>{r.previous_verdict ?? '—'}</td>
                  <td>{r.verdict ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
    </>
  );
}

export function ProblemPage(p: { page: PageContext; problem: ProblemView; notices?: Notice[]; verification?: CheckView | undefined; rejudge?: CheckView | undefined; submissions?: Page<GradedLine>; owner?: { tests: TestContent[]; versions: VersionLine[] } }) {
  const pr = p.problem;
  const samples = pr.tests.filter((t) => t.input !== undefined || t.expected_output !== undefined || t.interaction !== undefined);
  return (
    <Layout title={pr.name} page={p.page} notices={p.notices} scripts={['portal.js']}>
      <ProblemIdField id={pr.id} />
      <dl class="figures">
        <Figure label="Tests" field="test_count" value={pr.test_count} />
        <Figure label="Version" field="version" value={pr.version} />
        <Figure label="Test data" value={sizeText(pr.data_bytes)} />
        <Figure label="Time limit" field="time_limit" value={`${pr.time_limit.seconds} s (${TIME_SOURCE[pr.time_limit.source]})`} />
        <Figure label="Memory limit" value={pr.limits.memory !== undefined ? `${Math.round(pr.limits.memory / 1024)} MB` : "The service's"} />
      </dl>
      <p data-field="checker">Output compared by: {checkerText(pr.checker)}.</p>
      {pr.interactor && <p data-field="interactor">{`Interactive: an interactor (${pr.interactor.compiler}, ${pr.interactor.convention} convention: ${pr.interactor.files.join(', ')})${passesText(pr.interactor.passes)}.`}</p>}
      {pr.submit_answer && <p data-field="submit_answer">Submit answer: a submission is its answer files, NAME.out for test NAME; nothing is run.</p>}
      {pr.include && (
        <p data-field="include">{`Copied over each submission before it is built: ${Object.entries(pr.include)
          .map(([language, files]) => `${language}: ${files.join(', ')}`)
          .join('; ')}.`}</p>
      )}
      <p>
        Created <When d={pr.created_at} />, updated <When d={pr.updated_at} />.
      </p>
      <Statement problem={pr} />
      {pr.package && <PackageReport model={pr.package} />}
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
          {t.interaction !== undefined ? (
            <Interaction test={t} interactive={pr.interactor !== null} />
          ) : (
            <TextPair
              sides={[
                { label: 'Input', ariaLabel: `${t.name}, input`, text: t.input ?? `(${sizeText(t.input_bytes)}: too long to show)` },
                { label: 'Expected output', ariaLabel: `${t.name}, expected output`, text: t.expected_output ?? `(${sizeText(t.expected_output_bytes)}: too long to show)` },
              ]}
            />
          )}
        </section>
      ))}
      {p.owner && <AllTests tests={p.owner.tests} />}
      {p.submissions && <ProblemSubmissions id={pr.id} list={p.submissions} />}
      {p.owner && <Versions versions={p.owner.versions} />}
      {p.owner && <ChangeForms page={p.page} id={pr.id} testNames={pr.tests.map((t) => t.name)} />}
      <h2 id="verify">Verify</h2>
      {pr.example_submissions.length === 0 ? (
        <p>The package has no example submissions (submissions/accepted/, wrong_answer/, time_limit_exceeded/, …) to verify it with.</p>
      ) : (
        <>
          <p>{`Judges the package's ${pr.example_submissions.length} example submissions as ordinary runs of your account (each test billed as a submission) and compares their verdicts with the ones expected; without a stated time limit it derives one from the accepted submissions.`}</p>
          <form method="post" action={`/problems/${pr.id}/verify`} class="actions">
            <CsrfField token={p.page.csrf} />
            <button type="submit">Verify</button>
          </form>
          {p.verification && <Verification check={p.verification} />}
        </>
      )}
      {p.rejudge && (
        <>
          <h2>Rejudge</h2>
          <Rejudge check={p.rejudge} />
        </>
      )}
      <ProblemSettingsForm page={p.page} problem={pr} />
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

/**
 * A sample's interaction as the dialogue it is: each turn in order, the judge's (what the
 * program reads, `<`) and the program's (what it writes, `>`), pass by pass in a
 * multi-pass problem; a pass that is not interactive as its input and output.
 */
function Interaction(p: { test: ProblemTestView; interactive: boolean }) {
  const parsed = parseInteraction(p.test.interaction!, true);
  // Stored interactions were checked when the package was read.
  const passes = typeof parsed === 'string' ? [] : parsed;
  return (
    <div class="interaction">
      {passes.map((lines, i) => (
        <>
          {passes.length > 1 && <h4>{`Pass ${i + 1}`}</h4>}
          {p.interactive ? (
            <ol class="dialogue" aria-label={`${p.test.name}, interaction${passes.length > 1 ? `, pass ${i + 1}` : ''}`}>
              {lines.map((l) => (
                <li data-from={l.from}>
                  <span class="who">{l.from === 'judge' ? 'Judge' : 'Program'}</span>
                  <pre>{l.text}</pre>
                </li>
              ))}
            </ol>
          ) : (
            <TextPair
              sides={[
                { label: 'Input', ariaLabel: `${p.test.name}, pass ${i + 1}, input`, text: lines.filter((l) => l.from === 'judge').map((l) => `${l.text}\n`).join('') },
                { label: 'Output', ariaLabel: `${p.test.name}, pass ${i + 1}, output`, text: lines.filter((l) => l.from === 'program').map((l) => `${l.text}\n`).join('') },
              ]}
            />
          )}
        </>
      ))}
    </div>
  );
}

/** What each feedback setting shows widget keys, student keys and other accounts, in words. */
const FEEDBACK_WORDS: Record<Feedback, string> = {
  full: 'Everything: every test with its output',
  samples: 'Samples whole; the other tests by verdict only',
  first_failure: 'The first failing test: its name and verdict',
  verdict: 'The verdict and score only',
};

/** Who sees what of a problem's runs (src/problems/feedback.ts): the upload's fields and the settings form's. */
function FeedbackFields(p: { feedback: Feedback; public: boolean }) {
  return (
    <>
      <label for="f-feedback">What widget keys, student keys and other accounts see of a run</label>
      <select id="f-feedback" name="feedback">
        {FEEDBACK_SETTINGS.map((f) => (
          <option value={f} selected={p.feedback === f}>
            {FEEDBACK_WORDS[f]}
          </option>
        ))}
      </select>
      <p>
        <input type="checkbox" id="f-public" name="public" checked={p.public} />
        <label for="f-public">Public: any account's key may judge against it (billed to that account)</label>
      </p>
    </>
  );
}

/** This account's session and unmarked keys always see everything. */
function ProblemSettingsForm(p: { page: PageContext; problem: ProblemView }) {
  return (
    <section aria-labelledby="settings-h">
      <h2 id="settings-h">Feedback and sharing</h2>
      <form method="post" action={`/problems/${p.problem.id}/settings`} class="stack">
        <CsrfField token={p.page.csrf} />
        <FeedbackFields feedback={p.problem.feedback} public={p.problem.public} />
        <p>
          <button type="submit">Save settings</button>
        </p>
      </form>
    </section>
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
