// Where an output and its expected output first differ, line by line, as a page shows
// it (a submission's tests, the playground): the first line that differs once each line
// is trimmed at its end (the lines comparison's rule), with a few lines from there on
// each side.

export interface LineDiff {
  /** 1-based number of the first line that differs. */
  line: number;
  /** Up to `context` lines of each from there (fewer where one ends). */
  expected: string[];
  found: string[];
}

export function firstLineDiff(expected: string, found: string, context = 3): LineDiff | null {
  const lines = (text: string) => {
    const all = text.split('\n').map((l) => l.replace(/[ \t\r\v\f]+$/, ''));
    while (all.length > 0 && all[all.length - 1] === '') all.pop();
    return all;
  };
  const e = lines(expected);
  const f = lines(found);
  let i = 0;
  while (i < e.length && i < f.length && e[i] === f[i]) i++;
  if (i === e.length && i === f.length) return null;
  return { line: i + 1, expected: e.slice(i, i + context), found: f.slice(i, i + context) };
}
