// The playground: runs the form over the API's WebSocket with the pasted key. Output
// messages are appended as they arrive; the result message gives the verdict.

interface ResultMessage {
  type: 'result';
  status: string;
  exit_code: number | null;
  time: number | null;
  memory: number | null;
  compile_output?: string;
}

const form = document.getElementById('playground') as HTMLFormElement | null;
if (form) {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const output = $<HTMLPreElement>('output');
  const verdict = $<HTMLParagraphElement>('verdict');
  const run = $<HTMLButtonElement>('pg-run');
  let seq = 0;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const keySelect = $<HTMLSelectElement>('pg-key-id');
    const prefix = keySelect.selectedOptions[0]?.dataset['prefix'] ?? '';
    const key = $<HTMLInputElement>('pg-key').value.trim();
    output.textContent = '';
    if (!key.startsWith(prefix)) {
      verdict.textContent = `The pasted key does not start with ${prefix}: paste the key you chose.`;
      return;
    }
    const id = `pg-${++seq}`;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}${form.dataset['wsPath'] ?? '/api/v2/ws/'}?key=${encodeURIComponent(key)}`);
    run.disabled = true;
    verdict.textContent = 'Running…';
    ws.addEventListener('open', () => {
      ws.send(
        JSON.stringify({
          type: 'run',
          id,
          compiler: $<HTMLSelectElement>('pg-compiler').value,
          code: $<HTMLTextAreaElement>('pg-code').value,
          input: $<HTMLTextAreaElement>('pg-input').value,
        }),
      );
    });
    ws.addEventListener('message', (m) => {
      const msg = JSON.parse(String(m.data)) as { type: string; data?: string; message?: string };
      if (msg.type === 'output') output.textContent += msg.data ?? '';
      else if (msg.type === 'result') {
        const r = msg as unknown as ResultMessage;
        if (r.compile_output) output.textContent += r.compile_output;
        verdict.textContent = `${r.status} · exit ${r.exit_code ?? '—'} · ${r.time ?? '—'} s · ${r.memory ?? '—'} KB`;
        verdict.dataset['status'] = r.status;
        ws.close();
      } else if (msg.type === 'error') {
        verdict.textContent = `Refused: ${msg.message ?? 'error'}`;
        ws.close();
      }
    });
    ws.addEventListener('close', () => (run.disabled = false));
    ws.addEventListener('error', () => {
      verdict.textContent = 'Could not connect (is the key valid and active?).';
    });
  });
}
