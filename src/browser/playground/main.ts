import { inFormWords, isJudged, newFileName, optionsHint, playgroundRequest, type PlaygroundProgram } from '../../portal/playground-request.js';
import { Attempts } from '../shared/attempts.js';
import { loadEditor, type CodeEditor } from '../shared/editor-loader.js';
import { filesView } from '../shared/files.js';
import { stdinLine } from '../shared/stdin-line.js';
import { Tabs } from '../shared/tabs.js';
import { verdictText, type RunResult } from '../shared/verdict.js';
import { EDITING_HINT } from '../../portal/verdicts.js';
import { fmtSeconds } from '../../portal/format.js';

// The playground's form, in the browser. Its files become tabs (add, rename, remove; the
// main one marked), each with the code editor (fetched after the page shows; until then,
// or without it, the plain text box). A run that is not judged goes over the API's
// WebSocket, one connection per run, naming the chosen key by id (the portal session
// vouches for it): output is appended as it arrives, then the verdict and the files the
// program wrote. It is interactive (an input line under the output feeds its stdin)
// unless its input was given up front in the Standard input box. A judged run (tests
// with expected outputs, or a stored problem) is posted as the form is, and the result
// section of the page that comes back replaces this one's. Stop closes the connection
// (or aborts the post), which cancels the run on the server. Ctrl+Enter runs.

interface Message {
  type: string;
  id?: string | null;
  attempt?: number;
  stream?: string;
  data?: string;
  message?: string;
}

interface FileEntry {
  panel: HTMLElement;
  name: HTMLInputElement;
  main: HTMLInputElement;
  remove: HTMLButtonElement;
  area: HTMLTextAreaElement;
  label: HTMLLabelElement;
  editor: CodeEditor | null;
}

const form = document.getElementById('playground') as HTMLFormElement | null;
if (form) {
  const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
  const output = $<HTMLPreElement>('output');
  const verdict = $<HTMLParagraphElement>('verdict');
  const filesOut = $<HTMLDivElement>('pg-files');
  const judged = $<HTMLDivElement>('pg-judged');
  const runButton = $<HTMLButtonElement>('pg-run');
  const stopButton = $<HTMLButtonElement>('pg-stop');
  const compiler = $<HTMLSelectElement>('pg-compiler');
  const result = $<HTMLElement>('pg-result');
  const line = stdinLine($('pg-line'), $<HTMLInputElement>('pg-line-input'), $<HTMLButtonElement>('pg-eof'), output);
  const fileSet = form.querySelector<HTMLFieldSetElement>('fieldset.files')!;
  const testSet = $<HTMLDivElement>('pg-tests');
  let seq = 0;
  let made = 1000;
  let socket: WebSocket | null = null;
  let posting: AbortController | null = null;
  let editorModule: Awaited<ReturnType<typeof loadEditor>> | null = null;
  /** The program was edited (set once the session's store is wired, below), and not run since. */
  let changed = () => {};
  let dirty = false;

  // Files as tabs.
  const files: FileEntry[] = [];
  const tabsList = $<HTMLDivElement>('pg-tabs');
  tabsList.hidden = false;
  const tabs = new Tabs(tabsList);
  const tabLabel = (f: FileEntry) => `${f.name.value || 'unnamed'}${f.main.checked ? ' (main)' : ''}`;
  const relabel = () =>
    files.forEach((f, i) => {
      tabs.setLabel(i, tabLabel(f));
      f.label.textContent = `Code of ${f.name.value || 'an unnamed file'}`;
      f.editor?.setLabel(f.label.textContent);
      f.main.value = String(i);
      f.remove.value = `remove-file:${i}`;
      f.remove.hidden = files.length === 1;
    });
  const mountEditor = (f: FileEntry) => {
    if (!editorModule || f.editor) return;
    const editor = editorModule.createEditor({
      doc: f.area.value,
      filename: f.name.value,
      label: f.label.textContent ?? 'Code',
      hint: EDITING_HINT,
      onChange: (text) => {
        f.area.value = text;
        changed();
      },
      onRun: () => run(),
    });
    f.area.hidden = true;
    f.area.after(editor.element);
    // The label names the editor (its aria-label); a click on it focuses the editor.
    f.label.removeAttribute('for');
    f.label.addEventListener('click', () => editor.focus());
    f.editor = editor;
  };
  const addFile = (panel: HTMLElement) => {
    const f: FileEntry = {
      panel,
      name: panel.querySelector('input[name="file_name"]')!,
      main: panel.querySelector('input[name="main"]')!,
      remove: panel.querySelector('button.remove')!,
      area: panel.querySelector('textarea')!,
      label: panel.querySelector('label.code-label')!,
      editor: null,
    };
    files.push(f);
    tabs.add(tabLabel(f), panel);
    f.name.addEventListener('input', () => {
      relabel();
      f.editor?.setFilename(f.name.value);
    });
    f.main.addEventListener('change', relabel);
    f.remove.addEventListener('click', (e) => {
      e.preventDefault();
      const at = files.indexOf(f);
      if (files.length === 1 || at < 0) return;
      const wasMain = f.main.checked;
      f.editor?.destroy();
      files.splice(at, 1);
      tabs.remove(at);
      if (wasMain) files[0]!.main.checked = true;
      relabel();
      tabs.select(Math.min(at, files.length - 1), true);
    });
    mountEditor(f);
    return f;
  };
  for (const panel of fileSet.querySelectorAll<HTMLElement>('[data-file]')) addFile(panel);
  relabel();
  const firstMain = files.findIndex((f) => f.main.checked);
  tabs.select(firstMain < 0 ? 0 : firstMain);

  /** A copy of a server-rendered <template>, its placeholders made unique. */
  const fromTemplate = (id: string, n: number): HTMLElement => {
    const html = $<HTMLTemplateElement>(id).innerHTML.replaceAll('__i__', `n${++made}`).replaceAll('__n__', String(n));
    const holder = document.createElement('div');
    holder.innerHTML = html;
    return holder.firstElementChild as HTMLElement;
  };
  $<HTMLButtonElement>('pg-add-file').addEventListener('click', (e) => {
    e.preventDefault();
    const panel = fromTemplate('pg-file-template', files.length + 1);
    tabsList.parentElement!.insertBefore(panel, $('pg-code-hint'));
    const main = files.find((f) => f.main.checked) ?? files[0];
    const name = newFileName(files.map((x) => x.name.value), main?.name.value ?? '');
    const f = addFile(panel);
    f.name.value = name;
    f.editor?.setFilename(f.name.value);
    relabel();
    tabs.select(files.length - 1);
    f.name.focus();
  });

  // Tests with expected outputs.
  const renumberTests = () =>
    [...testSet.querySelectorAll<HTMLElement>('[data-test]')].forEach((t, i) => {
      const n = String(i + 1);
      t.querySelector('.test-title')!.textContent = `Test ${n}`;
      const [input, expected] = t.querySelectorAll('label');
      input!.textContent = `Input of test ${n}`;
      expected!.textContent = `Expected output of test ${n}`;
      const remove = t.querySelector<HTMLButtonElement>('button.remove')!;
      remove.textContent = `Remove test ${n}`;
      remove.value = `remove-test:${i}`;
    });
  const wireTest = (t: HTMLElement) =>
    t.querySelector('button.remove')!.addEventListener('click', (e) => {
      e.preventDefault();
      t.remove();
      renumberTests();
      $<HTMLButtonElement>('pg-add-test').focus();
    });
  testSet.querySelectorAll<HTMLElement>('[data-test]').forEach(wireTest);
  $<HTMLButtonElement>('pg-add-test').addEventListener('click', (e) => {
    e.preventDefault();
    const t = fromTemplate('pg-test-template', testSet.children.length + 1);
    testSet.append(t);
    wireTest(t);
    renumberTests();
    t.querySelector('textarea')!.focus();
  });

  // The compiler: its sample replaces the code only while the program is its sample (or
  // empty): what the person wrote is never thrown away. Its option forms, or none.
  const optionOf = () => compiler.selectedOptions[0];
  const sampleOf = (o: HTMLOptionElement | undefined) => o?.dataset['sample'] ?? '';
  const sourceOf = (o: HTMLOptionElement | undefined) => o?.dataset['source'] ?? '';
  let previous = optionOf();
  const showOptions = () => {
    const o = optionOf();
    const forms = (o?.dataset['options'] ?? '').split('\n').filter(Boolean);
    const field = $<HTMLInputElement>('pg-options');
    $('pg-options-row').hidden = forms.length === 0 && field.value === '';
    $('pg-options-hint').textContent = optionsHint(compiler.value, forms);
  };
  showOptions();
  compiler.addEventListener('change', () => {
    const next = optionOf();
    const only = files.length === 1 ? files[0]! : null;
    if (only) {
      const code = only.editor?.getValue() ?? only.area.value;
      if (code === sampleOf(previous) || code.trim() === '') {
        only.area.value = sampleOf(next);
        only.editor?.setValue(sampleOf(next));
      }
      if (only.name.value === sourceOf(previous)) {
        only.name.value = sourceOf(next);
        only.editor?.setFilename(only.name.value);
        relabel();
      }
    }
    previous = next;
    showOptions();
  });

  // The editors come once the page is there; the plain boxes work meanwhile, or for good if it cannot be fetched.
  loadEditor(location.origin).then(
    (mod) => {
      editorModule = mod;
      files.forEach(mountEditor);
      form.dataset['editor'] = 'ready';
    },
    () => {},
  );

  const program = (): PlaygroundProgram => {
    const value = (id: string) => $<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement>(id).value;
    return {
      compiler: compiler.value,
      source: sourceOf(optionOf()),
      files: files.map((f) => ({ name: f.name.value, content: f.editor?.getValue() ?? f.area.value })),
      main: Math.max(0, files.findIndex((f) => f.main.checked)),
      args: value('pg-args'),
      options: value('pg-options'),
      input: value('pg-input'),
      tests: [...testSet.querySelectorAll<HTMLElement>('[data-test]')].map((t) => {
        const [input, expected] = t.querySelectorAll('textarea');
        return { input: input!.value, expected: expected!.value };
      }),
      problem: value('pg-problem'),
    };
  };

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
    posting?.abort();
    posting = null;
    result.scrollIntoView({ block: 'nearest' });
  };
  let startedAt = 0;
  const begin = () => {
    startedAt = performance.now();
    // A program run is no change to lose (its result is on the server).
    dirty = false;
    $('pg-output-of').textContent = '';
    output.textContent = '';
    filesOut.replaceChildren();
    judged.replaceChildren();
    delete verdict.dataset['status'];
    verdict.textContent = 'Running…';
    running(true);
    result.scrollIntoView({ block: 'nearest' });
  };

  /** A judged run: the form posted as it is; the result section of the page that answers replaces this one's. */
  const post = async () => {
    begin();
    const controller = new AbortController();
    posting = controller;
    try {
      const body = new URLSearchParams();
      for (const [k, v] of new FormData(form)) if (typeof v === 'string' && k !== 'op') body.append(k, v);
      body.set('op', 'run');
      const res = await fetch(form.action, { method: 'POST', body, signal: controller.signal, credentials: 'same-origin' });
      const page = new DOMParser().parseFromString(await res.text(), 'text/html');
      if (posting !== controller) return;
      posting = null;
      const got = (id: string) => page.getElementById(id);
      if (!got('verdict')) return end('The run could not be made. Reload the page and try again.', 'refused');
      for (const id of ['pg-output-of', 'output', 'pg-files', 'pg-judged']) $(id).replaceChildren(...[...(got(id)?.childNodes ?? [])].map((n) => document.importNode(n, true)));
      end(got('verdict')!.textContent ?? '', got('verdict')!.dataset['status'] ?? 'refused');
    } catch {
      if (posting === controller) end('The connection closed before the run finished. Try again.', 'closed');
    }
  };

  /** A run over the WebSocket: output as it comes, then the verdict and the files. */
  const stream = (p: PlaygroundProgram) => {
    const id = `pg-${++seq}`;
    let streamed = { stdout: false, stderr: false };
    const attempts = new Attempts();
    begin();
    const keyId = $<HTMLSelectElement>('pg-key').value;
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${scheme}//${location.host}${form.dataset['wsPath'] ?? '/api/v2/ws/'}?key_id=${encodeURIComponent(keyId)}`);
    socket = ws;
    const request = playgroundRequest(p);
    const interactive = request.input === undefined;
    ws.addEventListener('open', () => {
      ws.send(JSON.stringify({ type: 'run', id, ...request, ...(interactive ? { interactive: true } : {}) }));
      if (interactive) {
        line.open((m) => {
          if (socket === ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'stdin', id, ...m }));
        });
      }
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
        const step = attempts.step(msg.attempt);
        if (step === 'stale') return;
        if (step === 'restart') {
          // The run was taken over and runs again from the start: its earlier output is void.
          output.textContent = '';
          streamed = { stdout: false, stderr: false };
        }
        const s = msg.stream === 'stderr' ? 'stderr' : 'stdout';
        streamed[s] = true;
        write(msg.data ?? '', s === 'stderr' ? 'stderr' : undefined);
      } else if (msg.type === 'result') {
        const r = msg as unknown as RunResult;
        // Output not streamed (a compiler's messages, say) comes from the result.
        if (!streamed.stdout && r.output) write(r.output);
        if (!streamed.stderr && r.error) write(r.error, 'stderr');
        filesOut.replaceChildren(...filesView(r));
        end(verdictText(r), r.status);
      } else if (msg.type === 'error') {
        end(inFormWords(msg.message ?? 'The run was refused.'), 'refused');
      }
    });
    ws.addEventListener('close', () => {
      if (socket === ws) end('The connection closed before the run finished. Try again.', 'closed');
    });
  };

  const run = () => {
    if (socket || posting) return;
    const p = program();
    if (isJudged(p)) void post();
    else stream(p);
  };

  form.addEventListener('submit', (event) => {
    // A button with a form action of its own ("Save as problem") posts the form there.
    if ((event as SubmitEvent).submitter?.hasAttribute('formaction')) return;
    event.preventDefault();
    run();
  });
  form.addEventListener('keydown', (e) => {
    // The editor runs on Ctrl+Enter itself (and says so by preventing the default).
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.defaultPrevented) {
      e.preventDefault();
      run();
    }
  });
  stopButton.addEventListener('click', () => {
    // Closing the connection (or aborting the post) cancels the run on the server. Said
    // in the output too, with the time the run had had: a program that printed nothing
    // would otherwise leave the box empty.
    if (!socket && !posting) return;
    const took = fmtSeconds((performance.now() - startedAt) / 1000);
    const note = document.createElement('span');
    note.className = 'note';
    note.textContent = `${output.textContent === '' || output.textContent?.endsWith('\n') ? '' : '\n'}Stopped after ${took}.`;
    output.append(note);
    end(`Stopped · ${took}`, 'stopped');
  });

  // The session's program (code, files, arguments, options, input, tests) kept across a
  // reload (sessionStorage: this tab only), and a question before leaving with changes.
  const STORE = 'runbox.playground';
  const save = () => {
    try {
      sessionStorage.setItem(STORE, JSON.stringify({ ...program(), key: $<HTMLSelectElement>('pg-key').value }));
    } catch {
      // Storage full or refused: the page still works, it just forgets.
    }
  };
  const restore = () => {
    const read = (): (PlaygroundProgram & { key?: string }) | null => {
      try {
        return JSON.parse(sessionStorage.getItem(STORE) ?? 'null') as (PlaygroundProgram & { key?: string }) | null;
      } catch {
        return null;
      }
    };
    const kept = read();
    if (!kept || !Array.isArray(kept.files) || kept.files.length === 0) return;
    const set = (id: string, v: string | undefined) => {
      const el = document.getElementById(id) as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement | null;
      if (el && typeof v === 'string') el.value = v;
    };
    set('pg-key', kept.key);
    set('pg-compiler', kept.compiler);
    previous = optionOf();
    while (files.length < kept.files.length) $<HTMLButtonElement>('pg-add-file').click();
    kept.files.forEach((k, i) => {
      const f = files[i]!;
      f.name.value = String(k.name ?? '');
      f.area.value = String(k.content ?? '');
      f.editor?.setValue(f.area.value);
      f.editor?.setFilename(f.name.value);
      f.main.checked = i === kept.main;
    });
    relabel();
    tabs.select(Math.max(0, Math.min(kept.main, files.length - 1)));
    set('pg-args', kept.args);
    set('pg-options', kept.options);
    set('pg-input', kept.input);
    set('pg-problem', kept.problem);
    const tests = Array.isArray(kept.tests) ? kept.tests : [];
    while (testSet.querySelectorAll('[data-test]').length < tests.length) $<HTMLButtonElement>('pg-add-test').click();
    [...testSet.querySelectorAll<HTMLElement>('[data-test]')].forEach((t, i) => {
      const [input, expected] = t.querySelectorAll('textarea');
      input!.value = tests[i]?.input ?? '';
      expected!.value = tests[i]?.expected ?? '';
    });
    showOptions();
    form.dataset['restored'] = 'true';
  };
  // A page that answers a posted form (Run without JavaScript) shows that form: it wins.
  if (!form.dataset['posted']) restore();
  changed = () => {
    dirty = true;
    save();
  };
  form.addEventListener('input', () => changed());
  form.addEventListener('change', save);
  form.addEventListener('click', () => queueMicrotask(save));
  window.addEventListener('beforeunload', (e) => {
    // Kept for a reload of this tab, but leaving the page (or closing it) loses them.
    if (dirty) e.preventDefault();
  });
}
