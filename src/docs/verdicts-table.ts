import { JUDGE0_STATUSES, VERDICT_NAMES } from '../compat/judge0/statuses.js';

// The verdicts table of docs/api.md, generated from the one table the Judge0 route's
// statuses come from (src/compat/judge0/statuses.ts), so the two cannot drift.

export function verdictsTableMarkdown(): string {
  const judge0 = (id: number | null) => (id === null ? '—' : `${id} ${JUDGE0_STATUSES[id - 1]!.description}`);
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const rows = VERDICT_NAMES.map((v) =>
    [`\`${v.verdict}\``, v.kattis, v.domjudge, v.testlib, judge0(v.judge0), v.note ?? ''].map(cell).join(' | '),
  );
  return ['| runbox | Kattis | DOMjudge | testlib | Judge0 | note |', '|---|---|---|---|---|---|', ...rows.map((r) => `| ${r} |`)].join('\n');
}
