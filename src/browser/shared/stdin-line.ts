// The input line under the output of an interactive run, for the widget and the
// playground alike. Shown while a program runs: Enter sends the line with its newline,
// Ctrl+D or the end button closes the program's stdin (a line not yet sent goes first,
// as a terminal would). What is sent is echoed in the output, marked as input in a way
// screen readers announce too ("Input: …").

export type StdinMessage = { data: string } | { eof: true };

export interface StdinLine {
  /** Shows the line for a run; what the reader sends goes to `send`. */
  open(send: (m: StdinMessage) => void): void;
  /** Hides it at the run's end; focus that was in it moves to `back` (the Run button). */
  close(back: HTMLElement): void;
}

export function stdinLine(row: HTMLElement, field: HTMLInputElement, end: HTMLButtonElement, log: HTMLElement): StdinLine {
  let send: ((m: StdinMessage) => void) | null = null;
  const hint = field.placeholder;
  const echo = (text: string) => {
    const mark = document.createElement('span');
    const label = document.createElement('span');
    mark.className = 'stdin';
    label.className = 'visually-hidden';
    label.textContent = 'Input: ';
    mark.append(label, text);
    log.append(mark);
  };
  const take = (newline: string) => {
    const data = field.value + newline;
    field.value = '';
    if (data === '' || !send) return;
    echo(data);
    send({ data });
  };
  const eof = () => {
    if (!send) return;
    take('');
    send({ eof: true });
    send = null;
    field.readOnly = true;
    field.placeholder = 'Input closed';
    end.setAttribute('aria-disabled', 'true');
  };
  field.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      take('\n');
    } else if (e.ctrlKey && !e.altKey && e.key.toLowerCase() === 'd') {
      e.preventDefault();
      eof();
    }
  });
  end.addEventListener('click', eof);
  return {
    open(to) {
      send = to;
      field.readOnly = false;
      field.value = '';
      field.placeholder = hint;
      end.removeAttribute('aria-disabled');
      row.hidden = false;
    },
    close(back) {
      send = null;
      const root = row.getRootNode() as Document | ShadowRoot;
      if (row.contains(root.activeElement)) back.focus();
      row.hidden = true;
    },
  };
}
