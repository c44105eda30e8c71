import type { PlanLimits } from '../../limits.js';
import type { UsageRecord } from '../../quota/usage.js';
import { fmtCount } from '../format.js';
import { RunsChart } from './chart.js';
import { Count, Figure, Layout, RevokedToggle, TableBox, When, type Notice, type PageContext } from './layout.js';
import type { KeyRow } from './keys.js';
import { KeyUsageCells, kindLabel } from './keys.js';

// The dashboard: the account's usage record (the figures of GET /api/usage/, each in an
// element whose data-field names its field), runs per day, the plan, and every key.

export function DashboardPage(p: {
  page: PageContext;
  usage: UsageRecord;
  plan: string;
  planLimits: PlanLimits;
  /** The live runners' slots: runs at once beyond them wait or are refused, whatever the plan says. */
  runnerSlots: number;
  perDay: { day: number; runs: number }[];
  keys: KeyRow[];
  /** Keys beyond those shown (newest first). */
  moreKeys: number;
  revokedCount: number;
  showRevoked: boolean;
  notices: Notice[];
}) {
  const u = p.usage;
  return (
    <Layout title="Dashboard" page={p.page} notices={p.notices}>
      <h2>This month</h2>
      <dl class="figures" aria-label="Usage this month">
        <Figure label="Month (UTC)" field="month" value={u.month} />
        <Figure label="Submissions" field="submissions" value={<Count n={u.submissions} />} />
        <Figure label="Monthly limit" field="monthly_limit" value={<Count n={u.monthly_limit} />} />
        <Figure label="Remaining" field="remaining" value={<Count n={u.remaining} />} />
        <Figure label="Resets at" field="resets_at" value={<When d={u.resets_at} />} />
      </dl>
      <RunsChart month={u.month} perDay={p.perDay} monthlyLimit={u.monthly_limit} />
      <h2>Plan: {p.plan}</h2>
      <TableBox label="Plan limits">
        <table>
          <thead>
            <tr>
              <th scope="col">Figure</th>
              <th scope="col" class="num">Limit</th>
              <th scope="col" class="num">Now</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">Submissions per minute</th>
              <td class="num" data-field="submissions_per_minute">
                <Count n={u.submissions_per_minute} />
              </td>
              <td class="num" data-field="current.submissions_last_minute">
                <Count n={u.current.submissions_last_minute} />
              </td>
            </tr>
            <tr>
              <th scope="row">Pending (queued or running)</th>
              <td class="num" data-field="pending_submissions">
                <Count n={u.pending_submissions} />
              </td>
              <td class="num" data-field="current.pending">
                <Count n={u.current.pending} />
              </td>
            </tr>
            <tr>
              <th scope="row">Running at once</th>
              <td class="num" data-field="running_submissions">
                <Count n={u.running_submissions} />
              </td>
              <td class="num" data-field="current.running">
                <Count n={u.current.running} />
              </td>
            </tr>
            <tr>
              <th scope="row">Run slots of the service</th>
              <td class="num" data-field="runner_slots">
                <Count n={p.runnerSlots} />
              </td>
              <td class="num">—</td>
            </tr>
            <tr>
              <th scope="row">Tests per request</th>
              <td class="num" data-field="tests_per_request">
                <Count n={p.planLimits.testsPerRequest} />
              </td>
              <td class="num">—</td>
            </tr>
            <tr>
              <th scope="row">Sandbox time per request</th>
              <td class="num">{p.planLimits.sandboxSecondsPerRequest} s</td>
              <td class="num">—</td>
            </tr>
          </tbody>
        </table>
      </TableBox>
      {p.runnerSlots < u.running_submissions && (
        <p data-field="runs_at_once_in_force">
          The service's runners have {p.runnerSlots} {p.runnerSlots === 1 ? 'slot' : 'slots'} now: at most {p.runnerSlots} of your runs go at once
          (all of them while no other account's run waits); a synchronous or widget run that finds them busy is refused.
        </p>
      )}
      <h2>Keys this month</h2>
      <RevokedToggle path="/" shown={p.showRevoked} count={p.revokedCount} />
      {p.keys.length === 0 ? (
        <p>
          No {p.revokedCount > 0 && !p.showRevoked ? 'active ' : ''}keys yet. <a href="/keys/new">Create one</a>.
        </p>
      ) : (
        <TableBox label="Keys this month">
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">App Name</th>
                <th scope="col">Kind</th>
                <th scope="col" class="num">Submissions</th>
                <th scope="col" class="num">Own limit</th>
                <th scope="col" class="num">Remaining</th>
                <th scope="col">Last used</th>
              </tr>
            </thead>
            <tbody>
              {p.keys.map((k) => (
                <tr data-key-prefix={k.key_prefix} data-key-id={k.id}>
                  <td class="mono nowrap">{k.key_prefix}…</td>
                  <td>
                    <a href={`/keys/${k.id}`}>{k.app_name}</a>
                    {k.revoked_at ? ' (revoked)' : ''}
                  </td>
                  <td>{kindLabel(k.kind)}</td>
                  <KeyUsageCells k={k} />
                  <td>{k.last_used ? <When d={k.last_used} /> : 'never'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {p.keys.length > 0 && (
        <p data-field="more-keys">
          {fmtCount(p.keys.length)} shown, newest first; {p.moreKeys === 0 ? 'no more.' : <>{fmtCount(p.moreKeys)} more on the <a href="/keys">API keys</a> page.</>}
        </p>
      )}
    </Layout>
  );
}
