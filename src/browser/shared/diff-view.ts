import { firstLineDiff } from '../../judge/diff.js';

// Where a judged run's output first differs from the expected output, as the widget
// shows it under a Wrong answer: the line number, then a few lines of each from there
// (the same rule as the portal's submission page: src/judge/diff.ts).

export function diffView(expected: string, found: string): HTMLElement | null {
  const d = firstLineDiff(expected, found);
  if (!d) return null;
  const box = document.createElement('div');
  box.className = 'diff';
  const head = document.createElement('p');
  head.textContent = `First difference at line ${d.line}:`;
  box.append(head);
  for (const [what, lines] of [['Expected', d.expected], ['Found', d.found]] as const) {
    const label = document.createElement('p');
    label.className = 'diff-label';
    label.textContent = what;
    const pre = document.createElement('pre');
    pre.className = `diff-${what.toLowerCase()}`;
    pre.textContent = lines.length > 0 ? lines.join('\n') : '(nothing)';
    box.append(label, pre);
  }
  return box;
}
