import { Connection, type ServerMessage } from './connection.js';
import { attachEditing, dedent } from './editing.js';
import { programArgs, sourcesOf, type Source } from './sources.js';
import { statementView } from './statement.js';
import { STYLES } from './styles.js';
import { Attempts } from '../shared/attempts.js';
import { diffView } from '../shared/diff-view.js';
import { loadEditor, type CodeEditor } from '../shared/editor-loader.js';
import { filesView } from '../shared/files.js';
import { stdinLine, type StdinLine } from '../shared/stdin-line.js';
import { Tabs } from '../shared/tabs.js';
import { verdictText, type RunResult } from '../shared/verdict.js';
import { EDITING_HINT } from '../../portal/verdicts.js';

// <runbox-widget key="…" compiler="python-3.9.7" [stdin="…"] [args="…"] [expected="…"] [editor]
//                [readonly] [interactive="false"] [api="https://…"]>
//   starting code, HTML-escaped (&lt;iostream&gt;), or in a <script type="text/plain"> child,
//   or several files: <script type="text/plain" data-file="src/util.py"> children;
//   an expected output in a <script type="text/plain" data-expected> child
// </runbox-widget>
//
// Attributes in, DOM events out (`runbox-result` with the result, `runbox-error` with
// {code, message}), everything drawn in an open shadow root. Runs go over runbox's
// WebSocket; output appears in the log region as the program writes it, then the
// verdict. Refusals (limits, a key that is not valid, a page the key does not allow)
// arrive as messages meant for the reader and are shown as they are. A run is interactive (an input line under
// the output feeds its stdin while it runs) unless its input was given up front in the
// input box, whose programs expect their input to end, or the page says interactive="false",
// or the run is judged against an expected output (the verdict is then Accepted or Wrong
// answer, with where the output first differs). Files the program writes under
// /box/out/ show under the output (images as images). With `editor`, the code boxes
// become the code editor, fetched then as a separate asset (the widget alone stays small).
// With problem="ID" it is an exercise judged against a stored problem: its name, statement
// and samples come from the server (a problem message), the run names the problem, and
// the result shows its verdict, score and each test the problem's feedback lets through;
// no test's answer is ever in the page. An exercise given its expected output keeps its
// given input (stdin): the box is read-only, since another input makes the answer wrong.

/** Where this script was loaded from: the runbox server, unless the page names another. */
const SCRIPT_ORIGIN = new URL(import.meta.url).origin;

let instances = 0;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, attrs: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

export class RunboxWidget extends HTMLElement {
  private built = false;
  private connection: Connection | null = null;
  private sources: Source[] = [];
  private areas: HTMLTextAreaElement[] = [];
  private editors: (CodeEditor | null)[] = [];
  private expected: string | null = null;
  private problem: string | null = null;
  private exercise!: HTMLDivElement;
  private files!: HTMLDivElement;
  private stdin: HTMLTextAreaElement | null = null;
  private button!: HTMLButtonElement;
  private line: StdinLine | null = null;
  private status!: HTMLSpanElement;
  private output!: HTMLPreElement;
  private current: { id: string; streamed: { stdout: boolean; stderr: boolean }; attempts: Attempts; request?: Record<string, unknown>; queued?: boolean } | null = null;
  private lineField: HTMLInputElement | null = null;
  private runs = 0;

  connectedCallback(): void {
    if (!this.built) this.build();
  }

  disconnectedCallback(): void {
    this.connection?.close();
    this.connection = null;
  }

  /** Runs the code in the box, as the Run button does. */
  run(): void {
    void this.start();
  }

  private build(): void {
    this.built = true;
    const n = ++instances;
    const { sources, expected, lostTag } = sourcesOf(this);
    this.sources = sources;
    this.expected = this.getAttribute('expected') ?? expected;
    this.problem = this.getAttribute('problem');
    const root = this.attachShadow({ mode: 'open' });
    const box = el('div', { className: 'box' });
    this.exercise = el('div', { className: 'exercise' });
    box.append(this.exercise);
    const compiler = this.getAttribute('compiler') ?? '';
    const readOnly = this.hasAttribute('readonly');
    const run = () => this.run();

    // One code box per file; several files get a tab each (the main one marked).
    const tabs = sources.length > 1 ? new Tabs(el('div', { className: 'tabs' }, { 'aria-label': 'Files' })) : null;
    if (tabs) box.append(tabs.list);
    sources.forEach((source, i) => {
      const panel = el('div', { className: 'panel' });
      const label = sources.length > 1 ? `Code of ${source.name}` : `Code${compiler ? ` (${compiler})` : ''}`;
      const area = el('textarea', { id: sources.length > 1 ? `code-${i}` : 'code', value: source.text, spellcheck: false, readOnly }, {
        autocapitalize: 'off',
        autocomplete: 'off',
        rows: String(Math.min(20, Math.max(4, source.text.split('\n').length + 1))),
      });
      if (!readOnly) area.setAttribute('aria-describedby', 'code-hint');
      panel.append(el('label', { htmlFor: area.id, textContent: label }), area);
      box.append(panel);
      attachEditing(area, run);
      this.areas.push(area);
      this.editors.push(null);
      tabs?.add(`${source.name}${source.main ? ' (main)' : ''}`, panel);
    });
    if (!readOnly) box.append(el('p', { id: 'code-hint', className: 'hint', textContent: EDITING_HINT }));
    // A problem's tests give the input; an expected output goes with the input it was given.
    if (this.hasAttribute('stdin') && this.problem === null) {
      this.stdin = el('textarea', { id: 'stdin', className: 'stdin', value: this.getAttribute('stdin') ?? '', spellcheck: false, readOnly: this.expected !== null }, { rows: '2' });
      box.append(el('label', { htmlFor: 'stdin', textContent: 'Input (stdin)' }), this.stdin);
    }
    // Never disabled while running: a disabled button would lose the keyboard focus.
    this.button = el('button', { type: 'button', textContent: 'Run' });
    this.status = el('span', { className: 'status' });
    box.append(el('div', { className: 'bar' }), el('label', { id: 'output-label', textContent: 'Output' }));
    box.querySelector('.bar')!.append(this.button, this.status);
    this.output = el('pre', { tabIndex: 0 }, {
      role: 'log',
      'aria-live': 'polite',
      'aria-labelledby': 'output-label',
      'data-placeholder': 'Press Run to see the output here.',
    });
    this.files = el('div', { className: 'files-out' }, { 'aria-live': 'polite' });
    box.append(this.output, this.files);
    // A judged run is not interactive: its input is given, and its output compared.
    if (this.expected === null && this.problem === null && !/^(false|off|no)$/i.test(this.getAttribute('interactive') ?? '')) {
      const row = el('div', { className: 'line', hidden: true });
      const field = el('input', { id: 'line', spellcheck: false, autocomplete: 'off' }, { autocapitalize: 'off' });
      const end = el('button', { type: 'button', className: 'end', textContent: 'End input' });
      const bar = el('div', { className: 'bar' });
      bar.append(field, end);
      row.append(el('label', { htmlFor: 'line', textContent: 'Input to the program (Enter sends a line, Ctrl+D ends input)' }), bar);
      box.append(row);
      this.line = stdinLine(row, field, end, this.output);
      this.lineField = field;
    }
    if (lostTag) this.notice(`The code lost its <${lostTag}>: write < as &lt; in the element's text, or put the code in a <script type="text/plain"> child.`);
    // A constructed stylesheet where the browser has them: a page whose CSP allows no
    // inline style (the portal's own, many blogs') would block a <style> element.
    if ('adoptedStyleSheets' in root && typeof CSSStyleSheet !== 'undefined' && 'replaceSync' in CSSStyleSheet.prototype) {
      const sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
      root.adoptedStyleSheets = [sheet];
      root.append(box);
    } else {
      root.append(el('style', { textContent: STYLES }), box);
    }

    this.button.addEventListener('click', run);
    if (this.stdin) attachEditing(this.stdin, run, false);
    this.dataset['instance'] = String(n);
    if (this.hasAttribute('editor')) void this.upgrade(readOnly);
    if (this.problem !== null) void this.loadProblem(this.problem);
  }

  /** Asks the server for the exercise's problem: name, statement, samples (never its hidden tests). */
  private async loadProblem(problem: string): Promise<void> {
    const connection = this.connectionOrNew();
    try {
      await connection.open();
      connection.send({ type: 'problem', id: 'problem', problem });
    } catch {
      this.notice('Could not connect to the code runner to load the exercise.');
    }
  }

  private showProblem(p: { name: string; statement: string | null; statement_format?: 'markdown' | 'latex' | null; samples: { name: string; input: string; expected_output: string }[] }): void {
    const parts: HTMLElement[] = [el('h3', { textContent: p.name })];
    if (p.statement) parts.push(statementView(p.statement, p.statement_format ?? 'markdown'));
    for (const s of p.samples) {
      parts.push(el('p', { className: 'hint', textContent: `Sample ${s.name}: input, then expected output` }), el('pre', { textContent: s.input }), el('pre', { textContent: s.expected_output }));
    }
    this.exercise.replaceChildren(...parts);
  }

  /** The code boxes become the code editor, once its asset has come; until then (or if it cannot come) they stay plain. */
  private async upgrade(readOnly: boolean): Promise<void> {
    let mod;
    try {
      mod = await loadEditor(this.getAttribute('api') ?? SCRIPT_ORIGIN);
    } catch {
      return;
    }
    this.areas.forEach((area, i) => {
      const label = area.labels?.[0];
      const editor = mod.createEditor({
        doc: area.value,
        filename: this.sources[i]!.name,
        compiler: this.getAttribute('compiler') ?? '',
        label: label?.textContent ?? 'Code',
        hint: readOnly ? '' : EDITING_HINT,
        readOnly,
        onRun: () => this.run(),
      });
      area.replaceWith(editor.element);
      // The label names the editor (aria-label inside its own shadow root); a click on it still focuses it.
      label?.removeAttribute('for');
      label?.addEventListener('click', () => editor.focus());
      this.editors[i] = editor;
    });
    this.dataset['editor'] = 'ready';
  }

  private codeOf(i: number): string {
    return this.editors[i]?.getValue() ?? this.areas[i]!.value;
  }

  private endpoint(): string {
    const base = new URL(this.getAttribute('api') ?? SCRIPT_ORIGIN);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    base.pathname = '/api/v2/ws/';
    base.search = `?key=${encodeURIComponent(this.getAttribute('key') ?? '')}`;
    return base.toString();
  }

  private connectionOrNew(): Connection {
    this.connection ??= new Connection(this.endpoint(), {
      message: (m) => this.onMessage(m),
      dropped: (final) => {
        if (this.current) this.finish(null, final ? null : 'The connection was lost before the run finished. Try again.');
        if (!final) this.status.textContent = 'Reconnecting…';
      },
      restored: () => {
        if (!this.current) this.status.textContent = '';
      },
    });
    return this.connection;
  }

  private async start(): Promise<void> {
    if (this.current) return;
    const id = `run-${++this.runs}`;
    this.current = { id, streamed: { stdout: false, stderr: false }, attempts: new Attempts() };
    this.button.setAttribute('aria-disabled', 'true');
    this.status.textContent = 'Running…';
    this.output.replaceChildren();
    this.files.replaceChildren();
    const connection = this.connectionOrNew();
    const input = this.stdin?.value ?? '';
    const line = input === '' ? this.line : null;
    const args = programArgs(this.getAttribute('args'));
    // One file as `code` (written under the compiler's own name), several as `files`.
    const program =
      this.sources.length === 1 && this.sources[0]!.name === ''
        ? { code: this.codeOf(0) }
        : { files: this.sources.map((s, i) => ({ name: s.name, content: this.codeOf(i) })), main: this.sources.find((s) => s.main)!.name };
    try {
      await connection.open();
      const request = {
        type: 'run',
        id,
        ...program,
        compiler: this.getAttribute('compiler') ?? '',
        ...(input ? { input } : {}),
        ...(args.length > 0 ? { args } : {}),
        ...(this.problem !== null ? { problem: this.problem } : {}),
        ...(this.expected !== null && this.problem === null ? { expected_output: this.expected } : {}),
        return_files: true,
        ...(line ? { interactive: true } : {}),
      };
      if (this.current?.id === id) this.current.request = request;
      connection.send(request);
      line?.open((m) => {
        // The run may have ended or the socket dropped meanwhile: nothing is waiting then.
        try {
          if (this.current?.id === id) connection.send({ type: 'stdin', id, ...m });
        } catch {
          // The socket dropped: the run ends with that message.
        }
      });
      // The program may wait for input at once: the reader who pressed Run types next, in the input line.
      if (line && this.lineField && this.shadowRoot?.activeElement === this.button) this.lineField.focus();
    } catch {
      this.finish(null, 'Could not connect to the code runner. Check your connection and try again.');
    }
  }

  private onMessage(m: ServerMessage): void {
    const run = this.current;
    if (m.type === 'error' && (m.id === null || m.id === undefined)) {
      // About the connection itself (e.g. a page the key does not allow).
      const message = String(m['message'] ?? 'The code runner refused this page.');
      if (run) this.finish(null, message);
      else this.notice(message);
      this.emit('runbox-error', { code: m['code'], message });
      return;
    }
    if (m.type === 'problem') return this.showProblem(m['problem'] as Parameters<RunboxWidget['showProblem']>[0]);
    if (m.id === 'problem' && m.type === 'error') return this.notice(String(m['message'] ?? 'The exercise could not be loaded.'));
    if (!run || m.id !== run.id) return;
    if (m.type === 'output') {
      const step = run.attempts.step(m['attempt']);
      if (step === 'stale') return;
      if (step === 'restart') {
        // The run was taken over and runs again from the start: its earlier output is void.
        this.output.replaceChildren();
        run.streamed = { stdout: false, stderr: false };
      }
      const stream = m['stream'] === 'stderr' ? 'stderr' : 'stdout';
      run.streamed[stream] = true;
      this.write(String(m['data'] ?? ''), stream);
    } else if (m.type === 'result') {
      const result = m as unknown as RunResult;
      // Output not streamed (a compiler's messages, say) is shown from the result.
      if (!run.streamed.stdout && result.output) this.write(result.output, 'stdout');
      if (!run.streamed.stderr && result.error) this.write(result.error, 'stderr');
      this.finish(result, null);
      this.emit('runbox-result', m);
    } else if (m.type === 'error' && (m['code'] === 'rate_limited' || m['reason'] === 'rate_limited') && run.request && !run.queued) {
      // A second Run within the connection's one run a second: queued, sent once the
      // second is over (once: a refusal the wait does not lift is then shown).
      run.queued = true;
      this.status.textContent = 'Queued: starting in a moment…';
      const request = run.request;
      setTimeout(() => {
        if (this.current?.id !== run.id) return;
        this.status.textContent = 'Running…';
        try {
          this.connection?.send(request);
        } catch {
          this.finish(null, 'The connection was lost before the run finished. Try again.');
        }
      }, 1000);
    } else if (m.type === 'error') {
      let message = String(m['message'] ?? 'The run was refused.');
      const valid = /\/compiler: must be one of: (.*)$/.exec(message);
      if (valid) message = `This widget's compiler "${this.getAttribute('compiler') ?? ''}" does not exist. Valid compilers: ${valid[1]}.`;
      this.finish(null, message);
      this.emit('runbox-error', { code: m['code'], message });
    }
  }

  private write(text: string, stream: 'stdout' | 'stderr'): void {
    if (stream === 'stderr') this.output.append(el('span', { className: 'stderr', textContent: text }));
    else this.output.append(document.createTextNode(text));
  }

  private notice(message: string): void {
    this.output.append(el('span', { className: 'notice', textContent: message }));
  }

  private finish(result: RunResult | null, message: string | null): void {
    if (message) {
      if (this.output.childNodes.length > 0 && !this.output.textContent?.endsWith('\n')) this.output.append('\n');
      this.notice(message);
    }
    if (result) {
      if (this.output.childNodes.length > 0 && !this.output.textContent?.endsWith('\n')) this.output.append('\n');
      const score = this.problem !== null && typeof result.score === 'number' ? ` · score ${Math.round(result.score * 100)}%` : '';
      this.output.append(el('span', { className: 'verdict', textContent: verdictText(result) + score }));
      const diff = result.verdict && result.verdict !== 'accepted' && this.expected !== null && result.status === 'success' ? diffView(this.expected, result.output ?? '') : null;
      this.files.replaceChildren(...(diff ? [diff] : []), ...filesView(result));
      // Each test the problem's feedback shows: its name and verdict.
      if (this.problem !== null && result.tests?.length) {
        const list = el('ul', { className: 'tests' });
        for (const t of result.tests) list.append(el('li', { textContent: `${t.name ?? ''}: ${verdictText({ status: t.status, verdict: t.verdict })}` }));
        this.files.append(list);
      }
    }
    this.current = null;
    this.line?.close(this.button);
    this.button.removeAttribute('aria-disabled');
    this.status.textContent = '';
  }

  private emit(type: string, detail: unknown): void {
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }
}
