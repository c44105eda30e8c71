import { once } from 'node:events';
import { expect } from 'chai';
import type { Page } from 'puppeteer-core';
import { WebSocket } from 'ws';
import { createKey, revokeKey, type CreatedKey } from '../../src/accounts/keys.js';
import { compilerEntry } from '../../src/compilers/catalogue.js';
import { browserUnavailable, byText, clickAndWait, fill, launchBrowser, seriousAxeViolations, type TestBrowser } from '../helpers/browser.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// The portal's playground in a real headless Chromium against the real API, runner and
// sandbox: the key chosen from the account's keys (nothing pasted), the compiler's
// sample from the catalogue, Ctrl+Enter, Stop, the output scrolled into view, verdicts
// in human units, and the input line of an interactive run, at desktop and phone width.

const PY = 'python-3.9.7';
const C = 'gcc-4.9';
const LINE = 'Input to the program (Enter sends a line, Ctrl+D ends input)';
const VERDICT = /^Finished · (\d+ ms|\d+\.\d\d s) · (\d+ KB|\d+\.\d MB)$/;
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

  const goto = async (path: string) => (await page.goto(stack.url + path, { waitUntil: 'load' }))!;
  const value = (selector: string) => page.$eval(selector, (e) => (e as HTMLInputElement).value);
  /** The code editor named `name` (its accessible name, as a screen reader says it). */
  const editor = (name: string) => page.locator(`::-p-aria([name="${name}"][role="textbox"])`);
  const editorReady = () => page.waitForSelector('#playground[data-editor="ready"]', { timeout: 30_000 });
  /** As a person pastes: everything in the file's editor selected, then the text comes in at once. */
  const setCode = async (code: string, name = 'Code of main.py') => {
    await editorReady();
    await editor(name).click();
    await page.keyboard.down('Control');
    await page.keyboard.press('a');
    await page.keyboard.up('Control');
    await page.keyboard.sendCharacter(code);
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
    expect(options).to.deep.equal([
      { value: keys[0]!.id, text: `first app (${keys[0]!.key_prefix}…)` },
      { value: keys[1]!.id, text: `second app (${keys[1]!.key_prefix}…)` },
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
      await page.keyboard.down('Control');
      await page.keyboard.press('Enter');
      await page.keyboard.up('Control');
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
    expect(await waitForVerdict()).to.deep.equal({ status: 'stopped', text: 'Stopped' });
    expect(await page.evaluate(() => document.activeElement?.id)).to.equal('pg-run');
    expect(await page.$eval('#pg-run', (b) => b.hasAttribute('aria-disabled'))).to.equal(false);
    const stopped = await until('the run to be cancelled', async () => {
      const runs = await runsOf(keys[0]!.id);
      const last = runs.length > before ? runs[runs.length - 1]! : undefined;
      return last && last.cancelled_at !== null && (last.result as { status?: string } | null)?.status ? last : undefined;
    }, 15_000);
    expect((stopped.result as { status: string }).status).to.equal('cancelled');
    expect(await outputText()).to.equal('started\n');
  });

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
    await page.keyboard.down('Control');
    await page.keyboard.press('d');
    await page.keyboard.up('Control');
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
