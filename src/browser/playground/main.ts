import { stdinLine } from '../shared/stdin-line.js';
import { verdictText, type RunResult } from '../shared/verdict.js';

// The playground: runs the form over the API's WebSocket, one connection per run,
// naming the chosen key by id (the portal session vouches for it). Output is appended
// as it arrives and the output is scrolled into view; the result gives the verdict.
// A run is interactive (an input line under the output feeds the program's stdin)
// unless its input was given up front in the Standard input box: then it ends there.
// Stop closes the connection, which cancels the run on the server. Ctrl+Enter runs.

interface Message {
  type: string;
  id?: string | null;
  stream?: string;
  data?: string;
  message?: string;
}

const form = document.getElementById('playground') as HTMLFormElement | null;
if (form) {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const output = $<HTMLPreElement>('output');
  const verdict = $<HTMLParagraphElement>('verdict');
  const runButton = $<HTMLButtonElement>('pg-run');
  const stopButton = $<HTMLButtonElement>('pg-stop');
  const compiler = $<HTMLSelectElement>('pg-compiler');
  const code = $<HTMLTextAreaElement>('pg-code');
  const result = $<HTMLElement>('pg-result');
  const line = stdinLine($('pg-line'), $<HTMLInputElement>('pg-line-input'), $<HTMLButtonElement>('pg-eof'), output);
  let seq = 0;
  let socket: WebSocket | null = null;

  // A compiler's sample replaces the code only while the code is a sample (or empty):
  // what the person wrote is never thrown away.
  const sampleOf = (o: HTMLOptionElement | undefined) => o?.dataset['sample'] ?? '';
  let sample = sampleOf(compiler.selectedOptions[0]);
  compiler.addEventListener('change', () => {
    const next = sampleOf(compiler.selectedOptions[0]);
    if (code.value === sample || code.value.trim() === '') code.value = next;
    sample = next;
  });

  const write = (text: string, className?: string) => {
    if (!className) return output.append(text);
    const span = document.createElement('span');
    span.className = className;
    span.textContent = text;
    output.append(span);
  };
  const running = (on: boolean) => {
    // aria-disabled, not disabled: a disabled button would drop the keyboard focus.
    (on ? stopButton : runButton).removeAttribute('aria-disabled');
    (on ? runButton : stopButton).setAttribute('aria-disabled', 'true');
    if (!on) {
      // Focus on Stop (now unusable) or in the input line goes back to Run.
      if (document.activeElement === stopButton) runButton.focus();
      line.close(runButton);
    }
  };
  const end = (text: string, status: string) => {
    verdict.textContent = text;
    verdict.dataset['status'] = status;
    running(false);
    const ws = socket;
    socket = null;
    ws?.close();
    result.scrollIntoView({ block: 'nearest' });
  };

  const run = () => {
    if (socket) return;
    const id = `pg-${++seq}`;
    const streamed = { stdout: false, stderr: false };
    output.textContent = '';
    delete verdict.dataset['status'];
    verdict.textContent = 'Running…';
    running(true);
    result.scrollIntoView({ block: 'nearest' });
    const keyId = $<HTMLSelectElement>('pg-key').value;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}${form.dataset['wsPath'] ?? '/api/v2/ws/'}?key_id=${encodeURIComponent(keyId)}`);
    socket = ws;
    const input = $<HTMLTextAreaElement>('pg-input').value;
    ws.addEventListener('open', () => {
      ws.send(JSON.stringify({ type: 'run', id, compiler: compiler.value, code: code.value, ...(input ? { input } : { interactive: true }) }));
      if (!input) line.open((m) => {
        if (socket === ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'stdin', id, ...m }));
      });
    });
    ws.addEventListener('message', (e) => {
      if (socket !== ws) return;
      let msg: Message;
      try {
        msg = JSON.parse(String(e.data)) as Message;
      } catch {
        return;
      }
      if (msg.id !== id && msg.id !== null) return;
      if (msg.type === 'output') {
        const stream = msg.stream === 'stderr' ? 'stderr' : 'stdout';
        streamed[stream] = true;
        write(msg.data ?? '', stream === 'stderr' ? 'stderr' : undefined);
      } else if (msg.type === 'result') {
        const r = msg as unknown as RunResult;
        // Output not streamed (a compiler's messages, say) comes from the result.
        if (!streamed.stdout && r.output) write(r.output);
        if (!streamed.stderr && r.error) write(r.error, 'stderr');
        end(verdictText(r), r.status);
      } else if (msg.type === 'error') {
        end(msg.message ?? 'The run was refused.', 'refused');
      }
    });
    ws.addEventListener('close', () => {
      if (socket === ws) end('The connection closed before the run finished. Try again.', 'closed');
    });
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    run();
  });
  form.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      run();
    }
  });
  stopButton.addEventListener('click', () => {
    // Closing the connection cancels the run on the server (queued or running).
    if (socket) end('Stopped', 'stopped');
  });
}
