import type { GradedLine, SubmissionFilter } from '../../grading/list.js';
import { RESULT_VERDICTS } from '../../judge/verdict.js';
import { fmtSeconds } from '../format.js';
import { statusWords, verdictWords } from '../verdicts.js';
import { TableBox, When } from './layout.js';

// The grading list's parts, the same on the Submissions page and on a problem's page:
// the table (verdict, score, problem, key, compiler, time), and the filter form.

/** A score as a grader reads it: 0.5 → "50%". */
export const scoreText = (score: number | null): string => (score === null ? '—' : `${Math.round(score * 1000) / 10}%`);

/** A submission's outcome in words: a judged run's verdict, else its status, else its state. */
export function outcomeWords(l: Pick<GradedLine, 'verdict' | 'status' | 'state'>): string {
  if (l.verdict !== null) return verdictWords(l.verdict);
  if (l.status !== null) return statusWords(l.status);
  return l.state === 'queued' ? 'Queued' : l.state === 'running' ? 'Running' : l.state;
}

export function GradedTable(p: { items: GradedLine[]; showProblem?: boolean }) {
  const showProblem = p.showProblem ?? true;
  return (
    <TableBox label="Submissions">
      <table class="graded">
        <thead>
          <tr>
            <th scope="col">Created</th>
            {showProblem && <th scope="col">Problem</th>}
            <th scope="col">Verdict</th>
            <th scope="col" class="num">Score</th>
            <th scope="col">Key</th>
            <th scope="col">Compiler</th>
            <th scope="col" class="num">Run time</th>
            <th scope="col">Callback</th>
          </tr>
        </thead>
        <tbody>
          {p.items.map((s) => (
            <tr data-submission-id={s.id}>
              <td class="nowrap">
                <a href={`/submissions/${s.id}`}>
                  <When d={s.created_at} />
                </a>
              </td>
              {showProblem && (
                <td data-field="problem">
                  {s.problem_id === null ? '—' : s.problem_name !== null ? <a href={`/problems/${s.problem_id}`}>{s.problem_name}</a> : 'Deleted problem'}
                  {s.problem_version !== null && <span class="muted">{` v${s.problem_version}`}</span>}
                </td>
              )}
              <td data-field="verdict" data-outcome={s.verdict ?? s.status ?? s.state}>
                {outcomeWords(s)}
              </td>
              <td class="num" data-field="score">
                {scoreText(s.score)}
              </td>
              <td class="mono nowrap">{s.key_prefix ? `${s.key_prefix}…` : '—'}</td>
              <td class="nowrap">{s.compiler}</td>
              <td class="num nowrap">{fmtSeconds(s.time)}</td>
              <td data-field="callback">{s.callback ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableBox>
  );
}

export interface FilterChoices {
  problems: { id: string; name: string }[];
  keys: { id: string; key_prefix: string; app_name: string }[];
}

/** Outcomes offered in the filter: every verdict, and the statuses of runs not judged. */
const OUTCOMES = [...new Set<string>(['accepted', ...RESULT_VERDICTS, 'success', 'queued', 'running'])];

const dayOf = (d: Date | undefined, to = false) => (d === undefined ? '' : new Date(d.getTime() - (to ? 86_400_000 : 0)).toISOString().slice(0, 10));

/** The filter form (GET, so a filtered list is an address to keep); `action` is the list it filters. */
export function GradingFilters(p: { action: string; filter: SubmissionFilter; choices: FilterChoices; showProblem?: boolean; error?: string | undefined; exportHref: string }) {
  const f = p.filter;
  return (
    <form class="filters" method="get" action={p.action} aria-label="Filter submissions">
      {(p.showProblem ?? true) && (
        <div>
          <label for="f-problem">Problem</label>
          <select id="f-problem" name="problem">
            <option value="">Any</option>
            {p.choices.problems.map((pr) => (
              <option value={pr.id} selected={f.problem === pr.id}>
                {pr.name}
              </option>
            ))}
          </select>
        </div>
      )}
      <div>
        <label for="f-key">Key</label>
        <select id="f-key" name="key">
          <option value="">Any</option>
          {p.choices.keys.map((k) => (
            <option value={k.id} selected={f.key === k.id}>
              {`${k.key_prefix}… ${k.app_name}`}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="f-verdict">Verdict</label>
        <select id="f-verdict" name="verdict">
          <option value="">Any</option>
          {OUTCOMES.map((v) => (
            <option value={v} selected={f.verdict === v}>
              {v === 'queued' ? 'Queued' : v === 'running' ? 'Running' : verdictWords(v)}
            </option>
          ))}
        </select>
      </div>
      <div>
        <label for="f-from">From</label>
        <input id="f-from" name="from" type="date" value={dayOf(f.from)} />
      </div>
      <div>
        <label for="f-to">To</label>
        <input id="f-to" name="to" type="date" value={dayOf(f.to, true)} />
      </div>
      <div class="filter-actions">
        <button type="submit">Filter</button>
        <a href={p.exportHref} download="submissions.csv">
          Export CSV
        </a>
      </div>
      {p.error && (
        <p class="field-error" role="alert">
          {p.error}
        </p>
      )}
    </form>
  );
}
