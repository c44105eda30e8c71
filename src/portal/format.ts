// How the portal writes times, durations and sizes: one form each, on every page.

/** A moment as `2026-12-01 00:00 UTC` (minutes; every date of the portal is in UTC). */
export function fmtTime(d: Date | string | null | undefined): string {
  if (d === null || d === undefined || d === '') return '—';
  const date = new Date(d);
  if (Number.isNaN(date.getTime())) return String(d);
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Seconds as a person reads them: `41 ms` below a second, `1.25 s` above. */
export function fmtSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return '—';
  if (s < 1) return `${Math.round(s * 1000)} ms`;
  return `${s.toFixed(2)} s`;
}

/** A size given in KB (as results give memory): `812 KB`, `2.7 MB`, `1.2 GB`. */
export function fmtKilobytes(kb: number | null | undefined): string {
  if (kb === null || kb === undefined) return '—';
  if (kb < 1024) return `${kb} KB`;
  if (kb < 1024 * 1024) return `${(kb / 1024).toFixed(1)} MB`;
  return `${(kb / 1024 / 1024).toFixed(1)} GB`;
}

/** A count as people read it, with thousands separators: `12,500`. */
export function fmtCount(n: number): string {
  return n.toLocaleString('en-US');
}
