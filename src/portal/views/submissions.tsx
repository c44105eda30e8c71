import type { DeliveryRow } from '../../callbacks/redeliver.js';
import type { JudgedTestView } from '../../judge/submission-tests.js';
import type { RunResult } from '../../result.js';
import type { GradedLine, SubmissionFilter } from '../../grading/list.js';
import type { SubmissionDetail } from '../submission-list.js';
import { GradedTable, GradingFilters, type FilterChoices } from './grading.js';
import { fmtCount, fmtKilobytes, fmtSeconds } from '../format.js';
import { sizeText } from '../returned-files.js';
import { statusWords, testLabel, verdictText, verdictWords } from '../verdicts.js';
import { outcomeWords, scoreText } from './grading.js';
import type { Page } from '../../util/pages.js';
import { CsrfField, Layout, TableBox, When, type Notice, type PageContext } from './layout.js';
import { JudgedTests, ReturnedFiles } from './run-parts.js';
import { TestGroups } from './test-groups.js';

// The account's submissions, and one submission: its code, its input, its result as
// readable fields (the raw JSON behind a toggle), and its callback deliveries.

/** How many older submissions there are: "no older ones", "1 older one", "more than 10,000 older ones". */
function olderText(list: Page<unknown>): string {
  if (list.more === 0) return 'no older ones';
  return `${list.moreAtLeast ? 'more than ' : ''}${fmtCount(list.more)} older ${list.more === 1 && !list.moreAtLeast ? 'one' : 'ones'}`;
}

export function SubmissionsPage(p: {
  page: PageContext;
  list: Page<GradedLine>;
  first: boolean;
  retentionDays: number;
  filter: SubmissionFilter;
  /** The filter as query text (no leading ?; empty for none). */
  query: string;
  choices: FilterChoices;
  error?: string | undefined;
}) {
  const { items, next } = p.list;
  const kept = p.retentionDays > 0 ? ` Submissions are kept for ${p.retentionDays} days; your usage still counts the older ones.` : '';
  const filtered = p.query !== '';
  const withQuery = (more: string) => [p.query, more].filter((x) => x !== '').join('&');
  return (
    <Layout title="Submissions" page={p.page}>
      <GradingFilters action="/submissions" filter={p.filter} choices={p.choices} error={p.error} exportHref={`/submissions.csv${p.query ? `?${p.query}` : ''}`} />
      {items.length === 0 && p.first ? (
        filtered ? (
          <p>No submissions match these filters.</p>
        ) : (
          <p>No submissions yet. Try the <a href="/playground">Playground</a>.{kept}</p>
        )
      ) : (
        <GradedTable items={items} />
      )}
      {(items.length > 0 || !p.first) && (
        <p data-field="more">
          {items.length === 0 ? 'No older submissions.' : `${fmtCount(items.length)} shown, newest first; ${olderText(p.list)}.`}
          {kept}
        </p>
      )}
      <nav class="pager" aria-label="Pages">
        {!p.first && <a href={`/submissions${filtered ? `?${p.query}` : ''}`}>Newest</a>}
        {next !== null && <a href={`/submissions?${withQuery(`after=${next}`)}`}>Older</a>}
      </nav>
    </Layout>
  );
}

/** Program text in a labelled block; an empty one says so. */
function TextBlock(p: { id: string; label: string; text: string | null | undefined; field?: string; empty?: string }) {
  return (
    <div class="block">
      <h3 id={`${p.id}-h`}>{p.label}</h3>
      {p.text ? (
        <pre aria-labelledby={`${p.id}-h`} data-field={p.field} tabIndex={0}>
          {p.text}
        </pre>
      ) : (
        <p class="muted" data-field={p.field}>
          {p.empty ?? 'None.'}
        </p>
      )}
    </div>
  );
}

function ResultFields(p: { r: RunResult }) {
  const { r } = p;
  return (
    <>
      <dl class="figures" aria-label="Result">
        {r.verdict !== undefined ? (
          // A judged run reads as its verdict: a wrong answer's program did end with success.
          <div>
            <dt>Verdict</dt>
            <dd data-field="result.verdict-words">{verdictWords(r.verdict)}</dd>
          </div>
        ) : (
          <div>
            <dt>Status</dt>
            <dd data-field="result.status">{r.status}</dd>
          </div>
        )}
        <div>
          <dt>Exit code</dt>
          <dd data-field="result.exit_code">{r.exit_code ?? (r.signal !== null ? `signal ${r.signal}` : '—')}</dd>
        </div>
        <div>
          <dt>CPU time</dt>
          <dd data-field="result.time">{fmtSeconds(r.time)}</dd>
        </div>
        <div>
          <dt>Wall time</dt>
          <dd data-field="result.total">{fmtSeconds(r.total)}</dd>
        </div>
        <div>
          <dt>Memory</dt>
          <dd data-field="result.memory">{fmtKilobytes(r.memory)}</dd>
        </div>
      </dl>
      {r.compile_output ? <TextBlock id="compile-output" label="Compiler output" text={r.compile_output} field="result.compile_output" /> : null}
      <TextBlock id="output" label={`Output${r.stdout_truncated ? ' (cut off at the output limit)' : ''}`} text={r.output} field="result.output" empty="No output." />
      <TextBlock id="error" label={`Error output${r.stderr_truncated ? ' (cut off at the output limit)' : ''}`} text={r.error} field="result.error" empty="No error output." />
      {r.tests && r.tests.length > 0 && (
        <>
          <h3>Tests</h3>
          <TableBox label="Test results">
            <table>
              <thead>
                <tr>
                  <th scope="col">Test</th>
                  <th scope="col">Status</th>
                  <th scope="col">Output</th>
                  <th scope="col" class="num">CPU time</th>
                  <th scope="col" class="num">Memory</th>
                </tr>
              </thead>
              <tbody>
                {r.tests.map((t, i) => (
                  <tr>
                    <th scope="row">{testLabel(t.name, i)}</th>
                    <td>{statusWords(t.status)}</td>
                    <td>
                      <pre class="cell">{t.output || t.error || '—'}</pre>
                    </td>
                    <td class="num">{fmtSeconds(t.time)}</td>
                    <td class="num">{fmtKilobytes(t.memory)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableBox>
        </>
      )}
    </>
  );
}

/** A file's bytes as text, or null when they are not text (NUL bytes, or not UTF-8). */
function textOf(base64: string): string | null {
  const bytes = Buffer.from(base64, 'base64');
  const text = bytes.toString('utf8');
  return bytes.includes(0) || text.includes('\uFFFD') ? null : text;
}

/** The program: its code (the main file), its other files, its arguments and compiler options. */
function ProgramBlocks(p: { s: SubmissionDetail }) {
  const o = p.s.run_options ?? {};
  const files = o.files ?? [];
  return (
    <>
      <TextBlock id="code" label={o.main ? `Code of ${o.main}` : 'Code'} text={p.s.code} field="code" empty="No code." />
      {files.map((f, i) => {
        const text = textOf(f.content_base64);
        return text === null ? (
          <div class="block">
            <h3>{f.name}</h3>
            <p class="muted">{`${Buffer.from(f.content_base64, 'base64').length} bytes, not text.`}</p>
          </div>
        ) : (
          <TextBlock id={`file-${i + 1}`} label={f.name} text={text} empty="Empty." />
        );
      })}
      {o.args && o.args.length > 0 && (
        <p data-field="args">
          Arguments: {o.args.map((a, i) => (
            <>
              {i > 0 ? ' ' : ''}
              <code>{a}</code>
            </>
          ))}
        </p>
      )}
      {o.compiler_options && o.compiler_options.length > 0 && (
        <p data-field="compiler_options">
          Compiler options: <code>{o.compiler_options.join(' ')}</code>
        </p>
      )}
    </>
  );
}

export function SubmissionPage(p: { page: PageContext; s: SubmissionDetail; json: string; judged?: JudgedTestView[] | undefined; deliveries: DeliveryRow[]; notices?: Notice[] }) {
  const { s } = p;
  // JSON.parse keeps the order of the fields, so the raw view keeps the API's.
  const view = JSON.parse(p.json) as { result?: RunResult };
  const result = view.result ?? null;
  return (
    <Layout title="Submission" page={p.page} notices={p.notices}>
      <p class="mono id">{s.id}</p>
      <dl class="figures">
        <div>
          <dt>Created</dt>
          <dd>
            <When d={s.created_at} />
          </dd>
        </div>
        <div>
          <dt>Key</dt>
          <dd class="mono">{s.key_prefix ? `${s.key_prefix}… ${s.app_name ?? ''}` : '—'}</dd>
        </div>
        <div>
          <dt>Compiler</dt>
          <dd>{s.compiler}</dd>
        </div>
        <div>
          <dt>Mode</dt>
          <dd>{s.mode}</dd>
        </div>
        {s.problem_id !== null && (
          <div>
            <dt>Problem</dt>
            <dd data-field="problem">
              {s.problem_name !== null ? <a href={`/problems/${s.problem_id}`}>{s.problem_name}</a> : 'Deleted problem'}
              {s.problem_version !== null && ` · version ${s.problem_version}`}
            </dd>
          </div>
        )}
        <div>
          <dt>{s.verdict !== null ? 'Verdict' : 'State'}</dt>
          <dd data-field="status" data-outcome={s.verdict ?? s.status ?? s.state}>
            {outcomeWords(s)}
            {s.score !== null && ` · ${scoreText(s.score)}`}
          </dd>
        </div>
      </dl>
      <h2>Program</h2>
      <ProgramBlocks s={s} />
      {s.tests && s.tests.length > 0 ? (
        s.tests.map((t, i) => <TextBlock id={`test-input-${i + 1}`} label={`Standard input of ${testLabel(t.name, i)}`} text={t.input} empty="Empty." />)
      ) : s.problem_id !== null && p.judged && p.judged.length > 0 ? (
        // A stored problem's tests: their inputs as this version keeps them (this page is the owner's), folded.
        p.judged.map((t, i) => (
          <details class="test-input" data-test-input={testLabel(t.name, i)}>
            <summary>{`Standard input of ${testLabel(t.name, i)}${t.input !== null ? ` (${sizeText(Buffer.byteLength(t.input))})` : ''}`}</summary>
            {t.input ? <pre tabIndex={0} aria-label={`Standard input of ${testLabel(t.name, i)}`}>{t.input}</pre> : <p class="muted">{t.input === null ? 'No longer kept.' : 'Empty.'}</p>}
          </details>
        ))
      ) : (
        <TextBlock id="stdin" label="Standard input" text={s.input} field="input" empty="None." />
      )}
      <h2>Result</h2>
      {result ? (
        <>
          {result.verdict !== undefined && (
            <p class="verdict-line" data-field="result.verdict">
              {`Verdict: ${verdictText(result)}${result.score !== undefined ? ` · score ${Math.round(result.score * 1000) / 1000}` : ''}${result.points !== undefined ? ` · ${result.points}${result.max_points != null ? ` / ${result.max_points}` : ''} points` : ''}`}
            </p>
          )}
          {result.groups && result.groups.length > 0 && (
            <>
              <h3>Test groups</h3>
              <TestGroups groups={result.groups} tests={result.tests ?? []} />
            </>
          )}
          {p.judged && p.judged.length > 0 && (
            <>
              <h3>Verdicts</h3>
              <JudgedTests tests={p.judged} />
            </>
          )}
          <ResultFields r={result} />
          {(result.files?.length ?? 0) + (result.files_dropped?.length ?? 0) > 0 && (
            <>
              <h3>Files the program wrote</h3>
              <ReturnedFiles files={result.files} dropped={result.files_dropped} />
            </>
          )}
        </>
      ) : (
        <p>The run has not ended yet.</p>
      )}
      <details class="raw">
        <summary>Raw JSON (as GET /api/v2/submissions/{s.id} answers)</summary>
        <pre data-field="json" tabIndex={0}>
          {JSON.stringify(view, null, 2)}
        </pre>
      </details>
      <h2>Callback deliveries</h2>
      {p.deliveries.length === 0 ? (
        <p>No callback for this submission (synchronous and WebSocket runs, and keys without a Redirect Url, send none).</p>
      ) : (
        <TableBox label="Callback deliveries">
          <table>
            <thead>
              <tr>
                <th scope="col">Delivery</th>
                <th scope="col">URL</th>
                <th scope="col">State</th>
                <th scope="col" class="num">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Created</th>
                <th scope="col">Delivered / next attempt</th>
              </tr>
            </thead>
            <tbody>
              {p.deliveries.map((d) => (
                <tr data-delivery-id={d.id}>
                  <td>{d.id}</td>
                  <td class="mono">{d.url}</td>
                  <td data-field="state">{d.state}</td>
                  <td class="num">{d.attempts}</td>
                  <td>{d.last_status !== null ? `HTTP ${d.last_status}` : (d.last_error ?? '—')}</td>
                  <td>
                    <When d={d.created_at} />
                  </td>
                  <td>
                    {d.delivered_at ? (
                      <When d={d.delivered_at} />
                    ) : d.next_attempt_at ? (
                      <>
                        next <When d={d.next_attempt_at} />
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {p.deliveries.length > 0 && s.redirect_url && (
        <form method="post" action={`/submissions/${s.id}/redeliver`}>
          <CsrfField token={p.page.csrf} />
          <p>Send the result again, as a new delivery, to the key's current Redirect Url ({s.redirect_url}).</p>
          <button type="submit">Redeliver</button>
        </form>
      )}
      <p>
        <a href="/submissions">Back to submissions</a>
      </p>
    </Layout>
  );
}
