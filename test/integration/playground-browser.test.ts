import { once } from 'node:events';
import { expect } from 'chai';
import type { Page } from 'puppeteer-core';
import { WebSocket } from 'ws';
import { createKey, revokeKey, type CreatedKey } from '../../src/accounts/keys.js';
import { compilerEntry } from '../../src/compilers/catalogue.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { browserUnavailable, byLabel, byText, clickAndWait, fill, launchBrowser, pressWithControl, seriousAxeViolations, type TestBrowser } from '../helpers/browser.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { makeZip } from '../helpers/zip.js';

// The portal's playground in a real headless Chromium against the real API, runner and
// sandbox: the key chosen from the account's keys (nothing pasted), the compiler's
// sample from the catalogue, Ctrl+Enter, Stop, the output scrolled into view, verdicts
// in human units, and the input line of an interactive run, at desktop and phone width;
// files in tabs with the code editor, arguments and compiler options, an image the
// program wrote, tests with expected outputs, a problem package uploaded in the portal
// and judged here, and the form without JavaScript.

const PY = 'python-3.9.7';
const C = 'gcc-4.9';
const LINE = 'Input to the program (Enter sends a line, Ctrl+D ends input)';
const VERDICT = /^Finished · (\d+ ms|\d+\.\d\d s) · (\d+ KB|\d+\.\d MB)$/;
/** A 1×1 PNG, as a program writes it byte by byte (no library needed). */
const DOT_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
const WIDTHS = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: '390 px', width: 390, height: 760 },
] as const;

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('the playground, in Chromium', function () {
  this.timeout(180_000);
  let stack: ResultsStack;
  let tb: TestBrowser;
  let page: Page;
  let accountId = '';
  const keys: CreatedKey[] = [];
  const email = `playground-${process.pid}@example.com`;

  /** beforeunload questions seen. */
  const leaving: string[] = [];
  const goto = async (path: string) => {
    // Each test starts from the page as the server gives it, not the session's kept program.
    if (page.url().startsWith(stack.url)) await page.evaluate(() => sessionStorage.clear());
    return (await page.goto(stack.url + path, { waitUntil: 'load' }))!;
  };
  const value = (selector: string) => page.$eval(selector, (e) => (e as HTMLInputElement).value);
  /** The code editor named `name` (its accessible name, as a screen reader says it). */
  const editor = (name: string) => page.locator(`::-p-aria([name="${name}"][role="textbox"])`);
  const editorReady = () => page.waitForSelector('#playground[data-editor="ready"]', { timeout: 30_000 });
  /** As a person pastes: everything in the file's editor selected, then the text pasted over it. */
  const setCode = async (code: string, name = 'Code of main.py') => {
    await editorReady();
    await editor(name).click();
    await pressWithControl(page, 'a');
    await page.evaluate((text) => {
      const content = document.activeElement!.shadowRoot!.activeElement!;
      const data = new DataTransfer();
      data.setData('text/plain', text);
      content.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }, code);
  };
  /** The code of the file at `index`, as the form will send it (the editor keeps its text box up to date). */
  const codeOf = (index = 0) => value(`#pg-code-${index}`);
  const outputText = () => page.$eval('#output', (e) => e.textContent ?? '');
  const waitForOutput = (fragment: string) => page.waitForFunction((f: string) => (document.getElementById('output')!.textContent ?? '').includes(f), { timeout: 90_000 }, fragment);
  const waitForVerdict = async () => {
    await page.waitForSelector('#verdict[data-status]', { timeout: 90_000 });
    return page.$eval('#verdict', (e) => ({ status: e.getAttribute('data-status'), text: e.textContent ?? '' }));
  };
  const inView = (selector: string) =>
    page.$eval(selector, (e) => {
      const r = e.getBoundingClientRect();
      return r.top >= 0 && r.top < window.innerHeight && r.bottom > 0;
    });
  const runsOf = (keyId: string) => stack.db.db.selectFrom('submissions').select(['id', 'compiler', 'mode', 'cancelled_at', 'result']).where('key_id', '=', keyId).execute();
  /** One run per second per connection, and a new connection per run: still, a short pause keeps the account's rate easy. */
  const pause = () => new Promise((r) => setTimeout(r, 300));

  before(async function () {
    const why = browserUnavailable() ?? realRunsUnavailable(['python3.9', 'gcc']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const env: Record<string, string> = {};
    if (process.env['RUNBOX_SANDBOX_UID_BASE']) env['RUNBOX_SANDBOX_UID_BASE'] = process.env['RUNBOX_SANDBOX_UID_BASE'];
    stack = await resultsStack('playground_browser', env);
    await stack.startRunner();
    tb = await launchBrowser();
    page = await tb.browser.newPage();
    // Leaving the playground with changes asks first (beforeunload): the tests go on.
    page.on('dialog', (d) => {
      if (d.type() === 'beforeunload') leaving.push(d.message());
      void d.accept().catch(() => {});
    });
    await goto('/signup');
    await fill(page, 'Email', email);
    await fill(page, 'Password', 'correct horse battery');
    await clickAndWait(page, await byText(page, 'Sign up', 'button'));
    accountId = (await stack.db.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
    for (const appName of ['first app', 'second app', 'gone app']) keys.push(await createKey(stack.db.db, { accountId, appName }));
    await revokeKey(stack.db.db, keys[2]!.id);
    await createKey(stack.db.db, { accountId, appName: 'blog widget', kind: 'widget', allowedOrigins: ['https://blog.example'] });
  });

  after(async () => {
    await tb?.close();
    await stack?.close();
  });

  afterEach(async () => {
    await page?.setViewport({ width: 1280, height: 900 });
  });

  it('offers the active API keys in one control and runs through the chosen one; nothing to paste', async () => {
    await goto('/playground');
    const options = await page.$$eval('#pg-key option', (os) => os.map((o) => ({ value: (o as HTMLOptionElement).value, text: o.textContent })));
    // The account's keys as every list shows them: newest first.
    expect(options).to.deep.equal([
      { value: keys[1]!.id, text: `second app (${keys[1]!.key_prefix}…)` },
      { value: keys[0]!.id, text: `first app (${keys[0]!.key_prefix}…)` },
    ]);
    expect(await page.$$('input[type="password"]'), 'no key to paste').to.have.length(0);
    await page.select('#pg-key', keys[1]!.id);
    await page.select('#pg-compiler', PY);
    await (await byText(page, 'Run', 'button')).click();
    const verdict = await waitForVerdict();
    expect(verdict.status).to.equal('success');
    expect(verdict.text).to.match(VERDICT);
    expect(await outputText()).to.equal('Hello, World!\n');
    const runs = await runsOf(keys[1]!.id);
    expect(runs.map((r) => [r.compiler, r.mode])).to.deep.equal([[PY, 'ws']]);
    expect(await runsOf(keys[0]!.id)).to.have.length(0);
  });

  it("the compiler choice loads that compiler's sample from the catalogue; code the person changed is kept", async () => {
    await goto('/playground');
    const ids = await page.$$eval('#pg-compiler option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(ids).to.include.members([PY, C]);
    await editorReady();
    await page.select('#pg-compiler', C);
    expect(await codeOf()).to.equal(compilerEntry(C)!.hello.code);
    expect(await value('#pg-file-name-0'), "the file takes the compiler's own name").to.equal('main.c');
    await page.select('#pg-compiler', PY);
    expect(await codeOf()).to.equal(compilerEntry(PY)!.hello.code);
    expect(await value('#pg-file-name-0')).to.equal('main.py');
    // The C sample compiles and runs as the catalogue says.
    await page.select('#pg-compiler', C);
    await (await byText(page, 'Run', 'button')).click();
    expect((await waitForVerdict()).status).to.equal('success');
    expect(await outputText()).to.equal(compilerEntry(C)!.hello.output);
    // Once changed, the code stays whatever compiler is chosen.
    await editor('Code of main.c').click();
    await page.keyboard.type('// mine\n');
    const mine = await codeOf();
    expect(mine).to.include('// mine');
    await page.select('#pg-compiler', PY);
    expect(await codeOf()).to.equal(mine);
  });

  for (const w of WIDTHS) {
    it(`at ${w.name}: Ctrl+Enter runs, and the output is scrolled into view; nothing scrolls sideways`, async () => {
      await page.setViewport({ width: w.width, height: w.height });
      await goto('/playground');
      await page.select('#pg-compiler', PY);
      await setCode('print("in view")');
      const sideways = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
      expect(sideways).to.equal(false);
      // Short enough that the page might not need to scroll: scrolled down first, so it must.
      await page.evaluate(() => window.scrollTo(0, 0));
      await editor('Code of main.py').click();
      if (w.width === 390) expect(await inView('#verdict'), 'at phone width the verdict starts below the fold').to.equal(false);
      await pause();
      await pressWithControl(page, 'Enter');
      const verdict = await waitForVerdict();
      expect(verdict.text).to.match(VERDICT);
      expect(await outputText()).to.equal('in view\n');
      expect(await inView('#output')).to.equal(true);
      expect(await inView('#verdict')).to.equal(true);
      expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth)).to.equal(false);
    });
  }

  it('Stop cancels the run on the server; the focus goes back to Run', async () => {
    await goto('/playground');
    await page.select('#pg-key', keys[0]!.id);
    await page.select('#pg-compiler', PY);
    await setCode('import time\nprint("started", flush=True)\ntime.sleep(20)\nprint("not reached")');
    expect(await page.$eval('#pg-stop', (b) => b.getAttribute('aria-disabled'))).to.equal('true');
    const before = (await runsOf(keys[0]!.id)).length;
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    await waitForOutput('started');
    expect(await page.$eval('#pg-stop', (b) => b.hasAttribute('aria-disabled'))).to.equal(false);
    await (await byText(page, 'Stop', 'button')).click();
    const said = await waitForVerdict();
    expect(said.status).to.equal('stopped');
    expect(said.text).to.match(/^Stopped · (\d+ ms|\d+\.\d\d s)$/);
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('pg-run');
    expect(await page.$eval('#pg-run', (b) => b.hasAttribute('aria-disabled'))).to.equal(false);
    const stopped = await until('the run to be cancelled', async () => {
      const runs = await runsOf(keys[0]!.id);
      const last = runs.length > before ? runs[runs.length - 1]! : undefined;
      return last && last.cancelled_at !== null && (last.result as { status?: string } | null)?.status ? last : undefined;
    }, 15_000);
    expect((stopped.result as { status: string }).status).to.equal('cancelled');
    expect(await outputText()).to.match(/^started\nStopped after (\d+ ms|\d+\.\d\d s)\.$/);
  });

  it('Stop on an endless loop that prints nothing says so in the output: Stopped, and the time so far', async () => {
    await goto('/playground');
    await page.select('#pg-key', keys[0]!.id);
    await page.select('#pg-compiler', PY);
    await setCode('while True:\n    pass\n');
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    await page.waitForFunction(() => !document.getElementById('pg-stop')!.hasAttribute('aria-disabled'), { timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 1500));
    // Still running: an endless loop ends only by Stop.
    expect(await page.$eval('#pg-stop', (b) => b.hasAttribute('aria-disabled'))).to.equal(false);
    await (await byText(page, 'Stop', 'button')).click();
    const said = await waitForVerdict();
    expect(said.status).to.equal('stopped');
    expect(said.text).to.match(/^Stopped · (\d+ ms|\d+\.\d\d s)$/);
    expect(await outputText()).to.match(/^Stopped after (\d+ ms|\d+\.\d\d s)\.$/);
    expect(await seriousAxeViolations(page)).to.deep.equal([]);
  });

  for (const w of WIDTHS) {
    it(`at ${w.name}: a reload keeps the code, arguments, input and tests of the session, and leaving with changes asks first`, async () => {
      await page.setViewport({ width: w.width, height: w.height });
      try {
        await goto('/playground');
        await page.select('#pg-compiler', PY);
        const code = `print("kept at ${w.name}")\n`;
        await setCode(code);
        await fill(page, 'Standard input', 'kept input');
        await (await byText(page, 'Add a test', 'button')).click();
        await fill(page, 'Input of test 1', 'test input');
        await fill(page, 'Expected output of test 1', 'test output');
        const asked = leaving.length;
        await page.reload({ waitUntil: 'load' });
        expect(leaving.length - asked, 'asked before leaving').to.equal(1);
        await page.waitForSelector('#playground[data-restored="true"]', { timeout: 10_000 });
        expect(await codeOf()).to.equal(code);
        expect(await value('#pg-input')).to.equal('kept input');
        expect(await page.$$eval('#pg-tests [data-test] textarea', (t) => t.map((x) => (x as HTMLTextAreaElement).value))).to.deep.equal(['test input', 'test output']);
        expect(await seriousAxeViolations(page)).to.deep.equal([]);
      } finally {
        await page.evaluate(() => sessionStorage.clear());
        await page.setViewport({ width: 1280, height: 900 });
      }
    });
  }

  for (const w of WIDTHS) {
    it(`at ${w.name}: answers input() typed into the input line, echoed as input; axe-clean while it waits`, async () => {
      await page.setViewport({ width: w.width, height: w.height });
      await goto('/playground');
      expect(await page.$eval('#pg-line', (e) => (e as HTMLElement).hidden)).to.equal(true);
      await page.select('#pg-compiler', PY);
      await setCode('name = input("Name? ")\nprint(f"Hello, {name}!")');
      await pause();
      await (await byText(page, 'Run', 'button')).click();
      await waitForOutput('Name? ');
      // The prompt came before anything was typed; the line is there to answer it.
      expect(await outputText()).to.equal('Name? ');
      expect(await page.$eval('#pg-line', (e) => (e as HTMLElement).hidden)).to.equal(false);
      const v = await seriousAxeViolations(page);
      expect(v, `axe while waiting for input: ${JSON.stringify(v)}`).to.deep.equal([]);
      await page.locator(`::-p-aria([name="${LINE}"][role="textbox"])`).click();
      expect(await inView('#pg-line-input')).to.equal(true);
      await page.keyboard.type('Ann');
      await page.keyboard.press('Enter');
      const verdict = await waitForVerdict();
      expect(verdict.text).to.match(VERDICT);
      expect(await outputText()).to.equal('Name? Input: Ann\nHello, Ann!\n');
      const echo = await page.$eval('#output .stdin', (e) => ({ text: e.textContent, label: e.querySelector('.visually-hidden')?.textContent }));
      expect(echo).to.deep.equal({ text: 'Input: Ann\n', label: 'Input: ' });
      expect(await page.$eval('#pg-line', (e) => (e as HTMLElement).hidden)).to.equal(true);
      expect(await page.evaluate(() => document.activeElement?.id), 'focus left the hidden line for Run').to.equal('pg-run');
      const after = await seriousAxeViolations(page);
      expect(after, `axe after the run: ${JSON.stringify(after)}`).to.deep.equal([]);
    });
  }

  it('End input closes the program\'s stdin (Ctrl+D too); input given up front makes a run that is not interactive', async () => {
    await goto('/playground');
    await page.select('#pg-compiler', PY);
    await setCode('import sys\nprint("ready", flush=True)\nprint(repr(sys.stdin.read()))');
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    await waitForOutput('ready');
    await page.locator(`::-p-aria([name="${LINE}"][role="textbox"])`).click();
    await page.keyboard.type('ab');
    await page.keyboard.press('Enter');
    await page.keyboard.type('c');
    await pressWithControl(page, 'd');
    expect((await waitForVerdict()).status).to.equal('success');
    expect(await outputText()).to.equal("ready\nInput: ab\nInput: c'ab\\nc'\n");
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    await waitForOutput('ready');
    await (await byText(page, 'End input', 'button')).click();
    expect((await waitForVerdict()).status).to.equal('success');
    expect(await outputText()).to.equal("ready\n''\n");
    expect(await page.evaluate(() => document.activeElement?.id), 'focus left the hidden line for Run').to.equal('pg-run');
    // Text in the Standard input box is the whole input: no line shows, the program reads to its end at once.
    await page.$eval('#pg-input', (e) => ((e as HTMLTextAreaElement).value = 'given'));
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    expect((await waitForVerdict()).status).to.equal('success');
    expect(await outputText()).to.equal("ready\n'given'\n");
    expect(await page.$eval('#pg-line', (e) => (e as HTMLElement).hidden)).to.equal(true);
  });

  /** The tabs' names, in order, and which one is shown. */
  const tabState = () =>
    page.$$eval('#pg-tabs [role="tab"]', (ts) => ({ names: ts.map((t) => t.textContent), selected: ts.findIndex((t) => t.getAttribute('aria-selected') === 'true') }));
  const sideways = () => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

  for (const w of WIDTHS) {
    it(`at ${w.name}: files in tabs (add, rename, remove; the main one marked), and the image the program wrote shown under the output; axe-clean`, async () => {
      await page.setViewport({ width: w.width, height: w.height });
      await goto('/playground');
      await page.select('#pg-key', keys[0]!.id);
      await page.select('#pg-compiler', PY);
      await editorReady();
      expect(await tabState()).to.deep.equal({ names: ['main.py (main)'], selected: 0 });
      expect(await page.$eval('#pg-file-name-0', (e) => e.closest('[data-file]')!.querySelector<HTMLElement>('button.remove')!.hidden), 'a lone file cannot be removed').to.equal(true);
      await setCode('import draw\nimport sys\ndraw.dot("/box/out/dot.png")\nprint("drawn by", sys.argv[1:])\n');
      await (await byText(page, 'Add a file', 'button')).click();
      expect(await tabState()).to.deep.equal({ names: ['main.py (main)', 'file2.py'], selected: 1 });
      // The new file's name field has the focus: a person renames it at once.
      expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).value)).to.equal('file2.py');
      await pressWithControl(page, 'a');
      await page.keyboard.type('draw.py');
      expect((await tabState()).names).to.deep.equal(['main.py (main)', 'draw.py']);
      await setCode(`import base64\ndef dot(path):\n    with open(path, "wb") as f:\n        f.write(base64.b64decode("${DOT_PNG}"))\n`, 'Code of draw.py');
      // A third file, then removed again.
      await (await byText(page, 'Add a file', 'button')).click();
      expect((await tabState()).names).to.deep.equal(['main.py (main)', 'draw.py', 'file3.py']);
      const remove = await page.$$('#playground [data-file] button.remove');
      await remove[2]!.click();
      expect(await tabState()).to.deep.equal({ names: ['main.py (main)', 'draw.py'], selected: 1 });
      // Arrow keys move between the tabs.
      await page.focus('#pg-tabs [role="tab"][aria-selected="true"]');
      await page.keyboard.press('ArrowLeft');
      expect((await tabState()).selected).to.equal(0);
      await fill(page, 'Arguments', 'one two');
      await page.keyboard.press('Enter');
      await page.keyboard.type('three');
      expect(await sideways()).to.equal(false);
      await pause();
      await (await byText(page, 'Run', 'button')).click();
      const verdict = await waitForVerdict();
      expect(verdict.text).to.match(VERDICT);
      expect(await outputText()).to.equal("drawn by ['one two', 'three']\n");
      const image = await page.waitForSelector('#pg-files img');
      const shown = await image!.evaluate((img) => ({ alt: (img as HTMLImageElement).alt, width: (img as HTMLImageElement).naturalWidth, src: (img as HTMLImageElement).src.slice(0, 22) }));
      expect(shown).to.deep.equal({ alt: 'dot.png, an image the program wrote', width: 1, src: 'data:image/png;base64,' });
      const link = await page.$eval('#pg-files a', (a) => ({ text: a.textContent, download: a.getAttribute('download') }));
      expect(link).to.deep.equal({ text: 'dot.png', download: 'dot.png' });
      expect(await sideways(), 'nothing scrolls sideways with the tabs and the image').to.equal(false);
      const v = await seriousAxeViolations(page);
      expect(v, `axe: ${JSON.stringify(v)}`).to.deep.equal([]);
      const [run] = (await runsOf(keys[0]!.id)).slice(-1);
      expect((run!.result as { files: { name: string }[] }).files.map((f) => f.name)).to.deep.equal(['dot.png']);
      if (w.width === 1280) {
        // Its submission's page shows the whole program, and the image.
        await goto(`/submissions/${run!.id}`);
        expect(await page.$$eval('.block h3', (hs) => hs.map((h) => h.textContent))).to.include.members(['Code of main.py', 'draw.py']);
        expect(await page.$eval('[data-field="args"]', (e) => e.textContent)).to.equal('Arguments: one two three');
        expect(await page.$$eval('[data-field="args"] code', (cs) => cs.map((c) => c.textContent))).to.deep.equal(['one two', 'three']);
        expect(await page.$eval('ul.files img', (i) => (i as HTMLImageElement).naturalWidth)).to.equal(1);
      }
    });
  }

  it('the code editor: the language highlighted, line numbers, Tab indents, Esc then Tab moves on (said in its hint); no CSP violation', async () => {
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const res = await goto('/playground');
    expect(res.headers()['content-security-policy']).to.include("style-src 'self'").and.not.include('unsafe-inline');
    await page.select('#pg-compiler', PY);
    await setCode('def twice(n):\n    return 2 * n\n');
    // The language's chunk comes after the editor shows: Python's highlighting, once it has come.
    await page.waitForFunction(() => [...document.querySelector('.code-editor')!.shadowRoot!.querySelectorAll('.cm-content span')].some((x) => x.textContent === 'def'), { timeout: 15_000 });
    const look = await page.evaluate(() => {
      const root = document.querySelector('.code-editor')!.shadowRoot!;
      const keyword = [...root.querySelectorAll('.cm-content span')].find((s) => s.textContent === 'def');
      const content = root.querySelector('.cm-content')!;
      return {
        // (CodeMirror keeps a hidden one to measure the gutter's width.)
        lineNumbers: [...root.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].filter((e) => getComputedStyle(e).visibility !== 'hidden').map((e) => e.textContent),
        keywordColour: keyword ? getComputedStyle(keyword).color : null,
        plainColour: getComputedStyle(content).color,
        label: content.getAttribute('aria-label'),
        hint: root.getElementById(content.getAttribute('aria-describedby') ?? '')?.textContent,
        styleElements: root.querySelectorAll('style').length + document.querySelectorAll('style').length,
        adopted: root.adoptedStyleSheets.length,
      };
    });
    expect(look.lineNumbers).to.deep.equal(['1', '2', '3']);
    expect(look.keywordColour, 'def is a keyword of Python').to.equal('rgb(160, 17, 31)');
    expect(look.plainColour).to.not.equal(look.keywordColour);
    expect(look.label).to.equal('Code of main.py');
    expect(look.hint).to.equal('Tab indents; press Esc, then Tab, to move on. Ctrl+Enter runs.');
    expect(look.styleElements, 'no <style> element: the CSP would refuse it').to.equal(0);
    expect(look.adopted).to.be.greaterThan(0);
    // Tab indents inside the editor.
    await pressWithControl(page, 'End');
    await page.keyboard.type('x = 1');
    await page.keyboard.press('Home');
    await page.keyboard.press('Tab');
    expect(await codeOf()).to.equal('def twice(n):\n    return 2 * n\n    x = 1');
    const inEditor = () => page.evaluate(() => document.activeElement?.classList.contains('code-editor') ?? false);
    expect(await inEditor()).to.equal(true);
    // Escape, then Tab: the focus moves on, and nothing is typed.
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    expect(await inEditor()).to.equal(false);
    expect(await codeOf()).to.equal('def twice(n):\n    return 2 * n\n    x = 1');
    expect(violations, violations.join('\n')).to.deep.equal([]);
  });

  it('arguments as argv, one per line, and compiler options where the compiler takes them (its forms said; a refused one says why)', async () => {
    await goto('/playground');
    await page.select('#pg-compiler', PY);
    expect(await page.$eval('#pg-options-row', (e) => (e as HTMLElement).hidden), 'python takes no compiler options').to.equal(true);
    await page.select('#pg-compiler', C);
    expect(await page.$eval('#pg-options-row', (e) => (e as HTMLElement).hidden)).to.equal(false);
    expect(await page.$eval('#pg-options-hint', (e) => e.textContent)).to.match(/^Separated by spaces\. gcc-4\.9 allows: -std=… \(c or gnu, then 89, .*-O\[0, 1, 2, 3, s or g\]/);
    await setCode('#include <stdio.h>\nint main(int argc, char **argv) {\n  int i;\n  for (i = 1; i < argc; i++) printf("%d:%s\\n", TIMES, argv[i]);\n  return 0;\n}\n', 'Code of main.c');
    await fill(page, 'Compiler options', '-DTIMES=3 -O2');
    await fill(page, 'Arguments', 'a b');
    await page.keyboard.press('Enter');
    await page.keyboard.type('c');
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    expect((await waitForVerdict()).status).to.equal('success');
    expect(await outputText()).to.equal('3:a b\n3:c\n');
    await fill(page, 'Compiler options', '-o /tmp/x');
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    const refused = await waitForVerdict();
    expect(refused.status).to.equal('refused');
    expect(refused.text).to.match(/^Compiler option 1: "-o" is never allowed/);
  });

  it('tests with expected outputs: a verdict per test, and where a wrong output first differs; axe-clean', async () => {
    await goto('/playground');
    await page.select('#pg-compiler', PY);
    await setCode('n = int(input())\nprint(n * 2)\nprint("done")\n');
    await (await byText(page, 'Add a test', 'button')).click();
    await fill(page, 'Input of test 1', '2');
    await fill(page, 'Expected output of test 1', '4\ndone');
    await (await byText(page, 'Add a test', 'button')).click();
    await fill(page, 'Input of test 2', '3');
    await fill(page, 'Expected output of test 2', '7\ndone');
    await pause();
    await (await byText(page, 'Run', 'button')).click();
    const verdict = await waitForVerdict();
    expect(verdict.text).to.match(/^Wrong answer · /);
    const rows = await page.$$eval('#pg-judged tbody tr', (trs) => trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('[data-field="verdict"]')!.textContent]));
    expect(rows).to.deep.equal([
      ['Test 1', 'Accepted'],
      ['Test 2', 'Wrong answer'],
    ]);
    const diff = await page.$eval('#pg-judged .diff', (d) => ({ title: d.querySelector('h3')!.textContent, expected: d.querySelector('.diff-expected')!.textContent, found: d.querySelector('.diff-found')!.textContent }));
    expect(diff).to.deep.equal({ title: 'Test 2: first difference at line 1', expected: '7\ndone', found: '6\ndone' });
    // The editor and the tests are as they were: the page was not reloaded.
    expect(await codeOf()).to.equal('n = int(input())\nprint(n * 2)\nprint("done")\n');
    const v = await seriousAxeViolations(page);
    expect(v, `axe: ${JSON.stringify(v)}`).to.deep.equal([]);
    // Removing a test renumbers the others.
    await (await byText(page, 'Remove test 1', 'button')).click();
    expect(await page.$$eval('#pg-tests .test-title', (hs) => hs.map((h) => h.textContent))).to.deep.equal(['Test 1']);
    expect(await value('#pg-tests textarea')).to.equal('3');
  });

  it('a problem package uploaded in the portal (its tests shown: samples, others by size), picked in the playground and judged; then deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-package-'));
    const zip = join(dir, 'sum.zip');
    writeFileSync(
      zip,
      makeZip([
        { name: 'sum/problem.yaml', content: 'name: Sum of two\nlimits:\n  time_limit: 2\n' },
        { name: 'sum/data/sample/1.in', content: '1 2\n' },
        { name: 'sum/data/sample/1.ans', content: '3\n' },
        { name: 'sum/data/secret/big.in', content: '40 2\n' },
        { name: 'sum/data/secret/big.ans', content: '42\n' },
        { name: 'sum/data/secret/neg.in', content: '-5 5\n' },
        { name: 'sum/data/secret/neg.ans', content: '0\n' },
      ]),
    );
    try {
      await goto('/problems');
      const input = (await byLabel(page, 'Package (zip)')) as import('puppeteer-core').ElementHandle<HTMLInputElement>;
      await input.uploadFile(zip);
      await clickAndWait(page, await byText(page, 'Upload', 'button'));
      expect(await page.$eval('h1', (h) => h.textContent)).to.equal('Sum of two');
      const tests = await page.$$eval('[aria-label="Tests"] tbody tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
      expect(tests).to.deep.equal([
        ['sample/1', 'Sample', '1', '4 bytes', '2 bytes'],
        ['secret/big', '—', '1', '5 bytes', '3 bytes'],
        ['secret/neg', '—', '1', '5 bytes', '2 bytes'],
      ]);
      expect(await page.$$eval('.sample pre', (ps) => ps.map((p) => p.textContent))).to.deep.equal(['1 2\n', '3\n']);
      const v = await seriousAxeViolations(page);
      expect(v, `axe on the problem page: ${JSON.stringify(v)}`).to.deep.equal([]);
      const problemUrl = page.url().replace(/\?.*$/, '');

      await goto('/playground');
      await page.select('#pg-compiler', PY);
      const option = await page.$$eval('#pg-problem option', (os) => os.map((o) => o.textContent));
      expect(option).to.deep.equal(['None', 'Sum of two (3 tests)']);
      await page.select('#pg-problem', problemUrl.slice(problemUrl.lastIndexOf('/') + 1));
      // Right but for negative numbers' sum: neg is wrong.
      await setCode('a, b = map(int, input().split())\nprint(abs(a + b) if a > 0 else 1)\n');
      await pause();
      await (await byText(page, 'Run', 'button')).click();
      expect((await waitForVerdict()).text).to.match(/^Wrong answer · /);
      const rows = await page.$$eval('#pg-judged tbody tr', (trs) => trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('[data-field="verdict"]')!.textContent]));
      expect(rows).to.deep.equal([
        ['sample/1', 'Accepted'],
        ['secret/big', 'Accepted'],
        ['secret/neg', 'Wrong answer'],
      ]);
      // The submission's page shows the same verdicts, with the first difference.
      await clickAndWait(page, await byText(page, 'The submission', 'a'));
      expect(await page.$$eval('.judged tbody tr [data-field="verdict"]', (ts) => ts.map((t) => t.textContent))).to.deep.equal(['Accepted', 'Accepted', 'Wrong answer']);
      expect(await page.$eval('.diff h3', (h) => h.textContent)).to.equal('secret/neg: first difference at line 1');
      expect(await page.$$eval('.diff pre', (ps) => ps.map((p) => p.textContent))).to.deep.equal(['0', '1']);
      const va = await seriousAxeViolations(page);
      expect(va, `axe on the submission page: ${JSON.stringify(va)}`).to.deep.equal([]);

      await page.goto(problemUrl, { waitUntil: 'load' });
      await clickAndWait(page, await byText(page, 'Delete problem…', 'a'));
      await clickAndWait(page, await byText(page, 'Delete problem', 'button'));
      expect(await page.$eval('main', (m) => m.textContent)).to.include('The problem is deleted.').and.include('No problems yet.');
      expect((await page.goto(problemUrl))!.status()).to.equal(404);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a multi-pass problem uploaded in the portal: its sample shown as its passes, picked in the playground and judged pass by pass; then deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'runbox-package-'));
    const zip = join(dir, 'twice.zip');
    const validator = [
      '#!/usr/bin/env python3',
      'import os, sys',
      'kind, n = open(sys.argv[1]).read().split()',
      'out = sys.stdin.read().split()',
      'if out != [str(2 * int(n))]:',
      '    sys.exit(43)',
      "if kind == 'first':",
      "    open(os.path.join(sys.argv[3], 'nextpass.in'), 'w').write(f'second {out[0]}\\n')",
      'sys.exit(42)',
    ].join('\n');
    writeFileSync(
      zip,
      makeZip([
        { name: 'twice/problem.yaml', content: 'name: Double twice\nvalidation: custom multi-pass\n' },
        { name: 'twice/data/sample/1.in', content: 'first 3\n' },
        { name: 'twice/data/sample/1.ans', content: '\n' },
        { name: 'twice/data/sample/1.interaction', content: '<first 3\n>6\n---\n<second 6\n>12\n' },
        { name: 'twice/data/secret/1.in', content: 'first 21\n' },
        { name: 'twice/data/secret/1.ans', content: '\n' },
        { name: 'twice/output_validators/twice/validator.py', content: validator },
      ]),
    );
    try {
      await goto('/problems');
      const input = (await byLabel(page, 'Package (zip)')) as import('puppeteer-core').ElementHandle<HTMLInputElement>;
      await input.uploadFile(zip);
      await clickAndWait(page, await byText(page, 'Upload', 'button'));
      expect(await page.$eval('h1', (h) => h.textContent)).to.equal('Double twice');
      expect(await page.$$eval('.interaction h4', (hs) => hs.map((h) => h.textContent))).to.deep.equal(['Pass 1', 'Pass 2']);
      expect(await page.$$eval('.interaction pre', (ps) => ps.map((p) => p.textContent))).to.deep.equal(['first 3\n', '6\n', 'second 6\n', '12\n']);
      const v = await seriousAxeViolations(page);
      expect(v, `axe on the problem page: ${JSON.stringify(v)}`).to.deep.equal([]);
      const problemUrl = page.url().replace(/\?.*$/, '');

      await goto('/playground');
      await page.select('#pg-compiler', PY);
      await page.select('#pg-problem', problemUrl.slice(problemUrl.lastIndexOf('/') + 1));
      await setCode('kind, n = input().split()\nprint(2 * int(n))\n');
      await pause();
      await (await byText(page, 'Run', 'button')).click();
      expect((await waitForVerdict()).text).to.match(/^Accepted · /);
      const rows = await page.$$eval('#pg-judged tbody tr', (trs) => trs.map((tr) => [tr.querySelector('th')!.textContent, tr.querySelector('[data-field="verdict"]')!.textContent]));
      expect(rows).to.deep.equal([
        ['sample/1', 'Accepted'],
        ['secret/1', 'Accepted'],
      ]);
      // The submission's page says how many passes each test took.
      await clickAndWait(page, await byText(page, 'The submission', 'a'));
      expect(await page.$$eval('.judged tbody tr [data-field="passes"]', (ts) => ts.map((t) => t.textContent))).to.deep.equal(['2', '2']);

      await page.goto(problemUrl, { waitUntil: 'load' });
      await clickAndWait(page, await byText(page, 'Delete problem…', 'a'));
      await clickAndWait(page, await byText(page, 'Delete problem', 'button'));
      expect(await page.$eval('main', (m) => m.textContent)).to.include('The problem is deleted.');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('without JavaScript the form still works: Add a file, then Run answers with the output and the image', async () => {
    await page.setJavaScriptEnabled(false);
    try {
      await goto('/playground');
      await page.select('#pg-compiler', PY);
      await page.$eval('#pg-code-0', (e) => ((e as HTMLTextAreaElement).value = 'import helper\nhelper.go()\n'));
      await clickAndWait(page, await byText(page, 'Add a file', 'button'));
      expect(await page.$$eval('input[name="file_name"]', (es) => es.map((e) => (e as HTMLInputElement).value))).to.deep.equal(['main.py', 'file2.py']);
      await fill(page, 'File name', 'main.py');
      const names = await page.$$('input[name="file_name"]');
      await names[1]!.evaluate((e) => ((e as HTMLInputElement).value = 'helper.py'));
      await page.$eval('#pg-code-1', (e, png) => ((e as HTMLTextAreaElement).value = `import base64\ndef go():\n    open("/box/out/dot.png", "wb").write(base64.b64decode("${png}"))\n    print("no script")\n`), DOT_PNG);
      await clickAndWait(page, await byText(page, 'Run', 'button'));
      expect(await page.$eval('#verdict', (e) => e.textContent)).to.match(VERDICT);
      expect(await outputText()).to.equal('no script\n');
      expect(await page.$eval('#pg-files img', (i) => (i as HTMLImageElement).naturalWidth)).to.equal(1);
      // The form comes back as it was sent.
      expect(await page.$$eval('input[name="file_name"]', (es) => es.map((e) => (e as HTMLInputElement).value))).to.deep.equal(['main.py', 'helper.py']);
    } finally {
      await page.setJavaScriptEnabled(true);
    }
  });

  describe('the WebSocket behind it (?key_id=)', () => {
    const wsUrl = () => `${stack.url.replace('http', 'ws')}/api/v2/ws/`;
    const cookieHeader = async () => (await page.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    /** The first message on a socket opened with these headers, or the handshake's status. */
    const first = async (query: string, headers: Record<string, string>, origin?: string) => {
      const ws = new WebSocket(`${wsUrl()}?${query}`, { headers, ...(origin ? { origin } : {}) });
      ws.on('error', () => {});
      const outcome = await Promise.race([
        once(ws, 'message').then(([m]) => ({ message: JSON.parse(String(m)) as Record<string, unknown> })),
        once(ws, 'unexpected-response').then(([, res]) => ({ status: (res as { statusCode: number }).statusCode })),
      ]);
      ws.terminate();
      return outcome;
    };

    it("refuses another account's key, a revoked key and no session; and any page but the portal's own", async () => {
      const cookie = await cookieHeader();
      const own = stack.url;
      const { key: foreign } = await keyFor(stack.db);
      for (const [why, query, headers] of [
        ["another account's key", `key_id=${foreign.id}`, { cookie }],
        ['a revoked key', `key_id=${keys[2]!.id}`, { cookie }],
        ['no session', `key_id=${keys[0]!.id}`, {}],
        ['not an id', 'key_id=1%20or%201', { cookie }],
      ] as const) {
        const got = await first(query, headers, own);
        expect(got, why).to.have.property('message');
        expect((got as { message: Record<string, unknown> }).message, why).to.include({ type: 'error', id: null, code: 'invalid_key' });
      }
      const elsewhere = await first(`key_id=${keys[0]!.id}`, { cookie }, 'https://evil.example');
      expect(elsewhere).to.deep.equal({ status: 403 });
      // With the session and the portal's origin, the key works.
      const ws = new WebSocket(`${wsUrl()}?key_id=${keys[0]!.id}`, { headers: { cookie }, origin: own });
      await once(ws, 'open');
      ws.send(JSON.stringify({ type: 'run', id: 'k', code: 'print(6*7)', compiler: PY }));
      let result: Record<string, unknown> | undefined;
      while (!result) {
        const [m] = (await once(ws, 'message')) as [Buffer];
        const msg = JSON.parse(String(m)) as Record<string, unknown>;
        if (msg['type'] === 'result' || msg['type'] === 'error') result = msg;
      }
      expect(result).to.include({ type: 'result', status: 'success', output: '42\n' });
      ws.close();
    });
  });
});
