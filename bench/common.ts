import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROJECT_ROOT } from '../src/util/paths.js';

// What every benchmark shares: percentiles, the row of the combined table (a figure,
// the baseline measured in the same run, their ratio and the target), the machine's
// load, and where results are written.

/** RUNBOX_BENCH_QUICK=1: a short smoke run (few rounds), not figures to quote. */
export const QUICK = process.env.RUNBOX_BENCH_QUICK === '1';

export interface Stats {
  median: number;
  p95: number;
  p99: number;
  min: number;
  max: number;
  runs: number;
}

export function stats(ms: number[]): Stats {
  if (ms.length === 0) throw new Error('no samples');
  const s = [...ms].sort((a, b) => a - b);
  // Nearest rank: the smallest sample with at least q of the samples at or below it.
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  const r = (v: number) => +v.toFixed(2);
  return { median: r(at(0.5)), p95: r(at(0.95)), p99: r(at(0.99)), min: r(s[0]!), max: r(s[s.length - 1]!), runs: s.length };
}

/** One line of the combined table. `ratio` is value / baseline. */
export interface Row {
  benchmark: string;
  figure: string;
  unit: string;
  value: number;
  baseline: number | null;
  /** What the baseline is, e.g. "bare chroot". */
  baselineIs: string;
  ratio: number | null;
  target: string;
  /** null: the figure is reported, not held to a target. */
  met: boolean | null;
}

export function row(r: Omit<Row, 'ratio'> & { ratio?: number | null }): Row {
  const ratio = r.ratio !== undefined ? r.ratio : r.baseline ? +(r.value / r.baseline).toFixed(2) : null;
  return { ...r, value: +r.value.toFixed(2), baseline: r.baseline === null ? null : +r.baseline.toFixed(2), ratio };
}

export interface BenchOutcome {
  /** Everything measured, for the JSON file. */
  result: Record<string, unknown>;
  rows: Row[];
}

export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

export function resultsDir(): string {
  const dir = join(PROJECT_ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Writes bench/results/<YYYY-MM-DD>-<name>.json and returns its path. */
export function writeResult(name: string, result: unknown): string {
  const file = join(resultsDir(), `${new Date().toISOString().slice(0, 10)}-${name}.json`);
  writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
  return file;
}

export function markdownTable(rows: Row[]): string {
  const fmt = (v: number | null) => (v === null ? '–' : Math.abs(v) >= 100 ? v.toFixed(0) : v.toFixed(1));
  const header = ['benchmark', 'figure', 'value', 'baseline', 'ratio', 'target', 'met'];
  const lines = rows.map((r) => [
    r.benchmark,
    r.figure,
    `${fmt(r.value)} ${r.unit}`,
    r.baseline === null ? '–' : `${fmt(r.baseline)} ${r.unit} (${r.baselineIs})`,
    r.ratio === null ? '–' : `${r.ratio.toFixed(2)}×`,
    r.target,
    r.met === null ? 'report' : r.met ? 'yes' : '**no**',
  ]);
  return [header, header.map(() => '---'), ...lines].map((c) => `| ${c.join(' | ')} |`).join('\n');
}

/** Runs `fn` when this module is the program (node dist/bench/<name>.js). */
export function runIfMain(url: string, fn: () => Promise<BenchOutcome>): void {
  if (url !== pathToFileURL(process.argv[1] ?? '').href) return;
  fn().then(
    (o) => {
      console.log(markdownTable(o.rows));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
