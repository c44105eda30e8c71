// Keys in the code box: Tab indents (Shift+Tab removes one level) as in an editor,
// but never traps the keyboard: Escape hands Tab back to the page for the next key
// press, so keyboard users can always move on. Ctrl/Cmd+Enter runs. The input box
// (`indents` false) leaves Tab to the browser: input rarely needs one.

const INDENT = '    ';

function replace(area: HTMLTextAreaElement, start: number, end: number, text: string, selStart: number, selEnd: number): void {
  area.setRangeText(text, start, end);
  area.setSelectionRange(selStart, selEnd);
  area.dispatchEvent(new Event('input', { bubbles: true }));
}

function indent(area: HTMLTextAreaElement, outdent: boolean): void {
  const { value, selectionStart: start, selectionEnd: end } = area;
  const lineStart = value.lastIndexOf('\n', start - 1) + 1;
  if (!outdent && start === end) {
    replace(area, start, end, INDENT, start + INDENT.length, start + INDENT.length);
    return;
  }
  // Every line the selection touches.
  const block = value.slice(lineStart, end);
  const lines = block.split('\n');
  let removedFirst = 0;
  const changed = lines.map((line, i) => {
    if (!outdent) return INDENT + line;
    const n = /^ {1,4}|^\t/.exec(line)?.[0].length ?? 0;
    if (i === 0) removedFirst = n;
    return line.slice(n);
  });
  const text = changed.join('\n');
  const delta = text.length - block.length;
  const firstShift = outdent ? -Math.min(removedFirst, start - lineStart) : INDENT.length;
  replace(area, lineStart, end, text, start === end ? start + firstShift : lineStart, end + delta);
}

export function attachEditing(area: HTMLTextAreaElement, run: () => void, indents = true): void {
  let tabLeaves = false;
  area.addEventListener('keydown', (e: KeyboardEvent) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
      return;
    }
    if (e.key === 'Escape') {
      tabLeaves = true;
      return;
    }
    if (e.key === 'Tab' && !e.altKey && !e.ctrlKey && !e.metaKey) {
      if (tabLeaves || area.readOnly || !indents) return; // the browser moves focus
      e.preventDefault();
      indent(area, e.shiftKey);
      return;
    }
    tabLeaves = false;
  });
  area.addEventListener('blur', () => (tabLeaves = false));
}

/** The element's text as starting code: surrounding blank lines and common indentation removed. */
export function dedent(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  const widths = lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length);
  const common = widths.length > 0 ? Math.min(...widths) : 0;
  return lines.map((l) => l.slice(common)).join('\n');
}
