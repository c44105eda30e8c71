import type { DeliveryRow } from '../../callbacks/redeliver.js';
import type { RunResult } from '../../result.js';
import type { SubmissionDetail, SubmissionLine } from '../submission-list.js';
import { CsrfField, fmtTime, Layout, type Notice, type PageContext } from './layout.js';

const seconds = (t: number | null) => (t === null ? '—' : `${t.toFixed(3)} s`);

export function SubmissionsPage(p: { page: PageContext; lines: SubmissionLine[]; pageNo: number; more: boolean }) {
  return (
    <Layout title="Submissions" page={p.page}>
      {p.lines.length === 0 ? (
        <p>No submissions yet. Try the <a href="/playground">Playground</a>.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Key</th>
              <th scope="col">Compiler</th>
              <th scope="col">Mode</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">Run time</th>
              <th scope="col">Callback</th>
            </tr>
          </thead>
          <tbody>
            {p.lines.map((s) => (
              <tr data-submission-id={s.id}>
                <td>
                  <a href={`/submissions/${s.id}`}>{fmtTime(s.created_at)}</a>
                </td>
                <td class="mono">{s.key_prefix ? `${s.key_prefix}…` : '—'}</td>
                <td>{s.compiler}</td>
                <td>{s.mode}</td>
                <td>{s.status ?? s.state}</td>
                <td class="num">{seconds(s.time)}</td>
                <td data-field="callback">{s.callback ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <nav class="pager" aria-label="Pages">
        {p.pageNo > 1 && <a href={`/submissions?page=${p.pageNo - 1}`}>Newer</a>}
        {p.more && <a href={`/submissions?page=${p.pageNo + 1}`}>Older</a>}
      </nav>
    </Layout>
  );
}

export function SubmissionPage(p: { page: PageContext; s: SubmissionDetail; result: RunResult | null; deliveries: DeliveryRow[]; notices?: Notice[] }) {
  const { s } = p;
  return (
    <Layout title={`Submission ${s.id}`} page={p.page} notices={p.notices}>
      <dl class="figures">
        <div>
          <dt>Created</dt>
          <dd>{fmtTime(s.created_at)}</dd>
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
        <div>
          <dt>Status</dt>
          <dd data-field="status">{s.status ?? s.state}</dd>
        </div>
      </dl>
      <h2>Result</h2>
      {p.result ? <pre data-field="result">{JSON.stringify(p.result, null, 2)}</pre> : <p>The run has not ended yet.</p>}
      <h2>Callback deliveries</h2>
      {p.deliveries.length === 0 ? (
        <p>No callback for this submission (synchronous and WebSocket runs, and keys without a Redirect Url, send none).</p>
      ) : (
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
                <td>{fmtTime(d.created_at)}</td>
                <td>{d.delivered_at ? fmtTime(d.delivered_at) : d.next_attempt_at ? `next ${fmtTime(d.next_attempt_at)}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
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
