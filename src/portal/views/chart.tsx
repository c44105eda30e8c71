import { thresholdCount, USAGE_THRESHOLDS } from '../../email/thresholds.js';
import { fmtCount } from '../format.js';

// Runs per day this month as a server-rendered SVG bar chart, with the running total
// and the 80 % and 100 % lines of the allowance (drawn when the total comes within
// reach of them; otherwise named under the chart). A table carries the same figures
// for screen readers and text browsers.

const n = fmtCount;

const W = 760;
const H = 220;
const PAD = { left: 48, right: 12, top: 12, bottom: 26 };

export function RunsChart(p: { month: string; perDay: { day: number; runs: number }[]; monthlyLimit: number }) {
  const [y, m] = p.month.split('-').map(Number) as [number, number];
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  const runs = Array.from({ length: days }, (_, i) => p.perDay.find((d) => d.day === i + 1)?.runs ?? 0);
  const cumulative = runs.reduce<number[]>((acc, r) => [...acc, (acc.at(-1) ?? 0) + r], []);
  const total = cumulative.at(-1) ?? 0;
  const lines = USAGE_THRESHOLDS.map((pct) => ({ pct, count: thresholdCount(p.monthlyLimit, pct) }));
  // The allowance lines come into the scale once the month's total reaches half of it.
  const showLines = p.monthlyLimit > 0 && total * 2 >= p.monthlyLimit;
  const top = Math.max(1, total, showLines ? Math.ceil(p.monthlyLimit * 1.05) : 0);
  const iw = W - PAD.left - PAD.right;
  const ih = H - PAD.top - PAD.bottom;
  const yOf = (v: number) => PAD.top + ih - (v / top) * ih;
  const bw = iw / days;
  const path = cumulative.map((v, i) => `${i === 0 ? 'M' : 'L'}${(PAD.left + bw * (i + 0.5)).toFixed(1)},${yOf(v).toFixed(1)}`).join(' ');
  return (
    <figure>
      <svg class="chart" viewBox={`0 0 ${W} ${H}`} width={W} height={H} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">{`Runs per day, ${p.month}`}</title>
        <desc id="chart-desc">{`${n(total)} runs so far this month of an allowance of ${n(p.monthlyLimit)}.`}</desc>
        <line x1={PAD.left} y1={PAD.top + ih} x2={W - PAD.right} y2={PAD.top + ih} stroke="#9aa3b5" />
        <text x={PAD.left - 6} y={PAD.top + 10} text-anchor="end">
          {n(top)}
        </text>
        <text x={PAD.left - 6} y={PAD.top + ih} text-anchor="end">
          0
        </text>
        {runs.map((r, i) => (
          <rect class="bar" x={PAD.left + bw * i + 1} y={yOf(r)} width={Math.max(1, bw - 2)} height={PAD.top + ih - yOf(r)} data-day={i + 1} data-runs={r} />
        ))}
        <path d={path} fill="none" stroke="#1a1f36" stroke-width="1.5" />
        {[1, 8, 15, 22, 29].filter((d) => d <= days).map((d) => (
          <text x={PAD.left + bw * (d - 0.5)} y={H - 8} text-anchor="middle">
            {d}
          </text>
        ))}
        {showLines &&
          lines.map((l) => (
            <g data-line={l.pct}>
              <line class={`l${l.pct}`} x1={PAD.left} x2={W - PAD.right} y1={yOf(l.count)} y2={yOf(l.count)} stroke-dasharray="6 4" stroke-width="1.5" />
              <text x={W - PAD.right - 4} y={yOf(l.count) - 4} text-anchor="end">{`${l.pct} % (${n(l.count)})`}</text>
            </g>
          ))}
      </svg>
      <figcaption class="muted">
        Bars: runs per day (UTC); line: running total.{' '}
        {showLines ? '' : `The 80 % (${n(lines[0]!.count)}) and 100 % (${n(lines[1]!.count)}) lines of the allowance are above this scale.`}
      </figcaption>
      <details>
        <summary>Runs per day as a table</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col" class="num">Runs</th>
              <th scope="col" class="num">Total</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((r, i) => (
              <tr>
                <td>{`${p.month}-${String(i + 1).padStart(2, '0')}`}</td>
                <td class="num">{r}</td>
                <td class="num">{cumulative[i]}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
