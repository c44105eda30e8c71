import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Page } from 'puppeteer-core';
import { browserUnavailable, hostSite, launchBrowser, pressWithControl, type HostSite, type TestBrowser } from '../helpers/browser.js';
import { startApi } from '../../src/api/server.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/util/clock.js';
import { testConfig } from '../helpers/api.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { revokeKey } from '../../src/accounts/keys.js';

// The embeddable widget in real Chromium: a host page on a second loopback origin
// (127.0.0.2) loads /widget/v1.js from the API (127.0.0.1) and embeds
// <runbox-widget>; runs go through the real API, runner and sandbox.

const PY = 'python-3.9.7';
const HOSTILE_CSS = 'button { color: red; font-size: 40px } pre, textarea { font-size: 40px; color: red }';

interface Snapshot {
  text: string;
  verdict: boolean;
  disabled: boolean;
  line: boolean;
}

/** The host page: hostile CSS, a button of its own to compare with, one widget. */
function hostPage(apiUrl: string, attrs: string, code: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A blog post</title>
<style>${HOSTILE_CSS}</style>
<script type="module" src="${apiUrl}/widget/v1.js"></script></head>
<body><main><h1>A blog post</h1><p>Try it:</p>
<runbox-widget ${attrs}>${code}</runbox-widget>
<p><button type="button" id="host-button">The page's own button</button></p></main></body></html>`;
}

/** Text of the widget's output region. */
function outputText(page: Page): Promise<string> {
  return page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('[role="log"]')!.textContent ?? '');
}

async function waitForOutput(page: Page, fragment: string): Promise<string> {
  await page.waitForFunction(
    (f: string) => (document.querySelector('runbox-widget')?.shadowRoot?.querySelector('[role="log"]')?.textContent ?? '').includes(f),
    { timeout: 90_000 },
    fragment,
  );
  return outputText(page);
}

/** Text of the element focused inside the widget. */
function focusedText(page: Page): Promise<string | null> {
  return page.$eval('runbox-widget', (w) => w.shadowRoot!.activeElement?.textContent ?? null);
}

async function runButton(page: Page) {
  return page.locator('::-p-aria([name="Run"][role="button"])').setTimeout(30_000);
}

describe('the embeddable widget, in Chromium', function () {
  let s: ResultsStack;
  let chromium: TestBrowser;
  let site: HostSite;

  before(async function () {
    const why = browserUnavailable() ?? realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const uidBase = process.env['RUNBOX_SANDBOX_UID_BASE'];
    s = await resultsStack('widget', uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {});
    await s.startRunner();
    site = await hostSite();
    chromium = await launchBrowser();
  });
  after(async () => {
    await chromium?.close();
    await site?.close();
    await s?.close();
  });

  async function open(path: string, attrs: string, code = 'print("hello")'): Promise<Page> {
    const page = await chromium.browser.newPage();
    await page.goto(site.page(path, hostPage(s.url, attrs, code)), { waitUntil: 'load' });
    await page.waitForFunction(() => customElements.get('runbox-widget') !== undefined && !!document.querySelector('runbox-widget')?.shadowRoot);
    return page;
  }

  it('is served as a cross-origin, long-cached module script, whatever the Accept header', async () => {
    const res = await fetch(`${s.url}/widget/v1.js`, { headers: { Accept: 'application/javascript', 'Accept-Encoding': 'gzip' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.equal('text/javascript; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    // The loader changes with each release: a day, then asked again (the editor files it names are immutable).
    expect(res.headers.get('cache-control')).to.equal('public, max-age=86400');
    const body = await res.text(); // fetch undoes the gzip
    expect(body).to.equal(readFileSync(new URL('../../browser/widget.js', import.meta.url), 'utf8'));
    expect(body).to.include('runbox-widget');
    const again = await fetch(`${s.url}/widget/v1.js`, { headers: { 'If-None-Match': res.headers.get('etag')! } });
    expect(again.status).to.equal(304);
    const post = await fetch(`${s.url}/widget/v1.js`, { method: 'POST' });
    expect(post.status).to.equal(405);
  });

  it('streams the output as the program writes it, then shows the verdict with time and memory', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
    const code = 'import time\nprint("first", flush=True)\ntime.sleep(0.5)\nprint(input()[::-1], flush=True)';
    const page = await open('/stream', `key="${key.key}" compiler="${PY}" stdin="olleh"`, code);
    // Every state the output region passes through, recorded as it changes.
    await page.evaluate(() => {
      const root = document.querySelector('runbox-widget')!.shadowRoot!;
      const log = root.querySelector('[role="log"]')!;
      const button = root.querySelector('button')!;
      const seen: Snapshot[] = [];
      (window as unknown as { seen: Snapshot[] }).seen = seen;
      const line = root.querySelector('.line') as HTMLElement;
      new MutationObserver(() =>
        seen.push({ text: log.textContent ?? '', verdict: !!log.querySelector('.verdict'), disabled: button.getAttribute('aria-disabled') === 'true', line: !line.hidden }),
      ).observe(log, {
        childList: true,
        subtree: true,
        characterData: true,
      });
    });
    await (await runButton(page)).click();
    const text = await waitForOutput(page, 'Finished');
    expect(text).to.match(/^first\nhello\nFinished · (\d+ ms|\d+\.\d\d s) · (\d+ KB|\d+\.\d MB)$/);
    const seen = await page.evaluate(() => (window as unknown as { seen: Snapshot[] }).seen);
    const firstOnly = seen.find((x) => x.text.startsWith('first') && !x.text.includes('hello'));
    expect(firstOnly, 'the first line was shown before the rest had been written').to.not.equal(undefined);
    expect(firstOnly!.verdict).to.equal(false);
    expect(firstOnly!.disabled, 'Run is disabled while the run is in flight').to.equal(true);
    expect(firstOnly!.line, 'input given up front: the run is not interactive, no input line').to.equal(false);
    const enabled = await page.$eval('runbox-widget', (w) => !w.shadowRoot!.querySelector('button')!.hasAttribute('aria-disabled'));
    expect(enabled).to.equal(true);
    const rows = await s.db.db.selectFrom('submissions').select(['mode', 'input']).where('key_id', '=', key.id).execute();
    expect(rows).to.deep.equal([{ mode: 'ws', input: 'olleh' }]);
    await page.close();
  });

  it('is usable by keyboard: Tab indents, Esc then Tab moves on to Run, Enter runs', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
    const page = await open('/keyboard', `key="${key.key}" compiler="${PY}"`, '');
    await page.locator('::-p-aria([name="Code (python-3.9.7)"][role="textbox"])').click();
    await page.keyboard.type('for i in range(2):\n');
    await page.keyboard.press('Tab');
    await page.keyboard.type('print(i)');
    const code = await page.$eval('runbox-widget', (w) => (w.shadowRoot!.querySelector('textarea') as HTMLTextAreaElement).value);
    expect(code).to.equal('for i in range(2):\n    print(i)');
    await page.keyboard.press('Escape');
    await page.keyboard.press('Tab');
    const focused = await page.$eval('runbox-widget', (w) => w.shadowRoot!.activeElement?.textContent ?? null);
    expect(focused).to.equal('Run');
    await page.keyboard.press('Enter');
    expect(await waitForOutput(page, 'Finished')).to.match(/^0\n1\nFinished/);
    // The keyboard focus stayed on Run through the run: Enter runs again at once.
    expect(await focusedText(page)).to.equal('Run');
    await new Promise((r) => setTimeout(r, 1100)); // one run per second per connection
    await page.keyboard.press('Enter');
    const runs = () => s.db.db.selectFrom('submissions').select('id').where('key_id', '=', key.id).execute();
    for (let i = 0; (await runs()).length < 2; i++) {
      if (i > 100) throw new Error('Enter on the focused Run did not start a second run');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await waitForOutput(page, 'Finished')).to.match(/^0\n1\nFinished/);
    expect(await focusedText(page)).to.equal('Run');
    await page.close();
  });

  it('a page the key does not allow is refused with a message, and nothing is counted', async () => {
    const { accountId, key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: ['https://blog.example'] });
    const page = await open('/elsewhere', `key="${key.key}" compiler="${PY}"`);
    await (await runButton(page)).click();
    const text = await waitForOutput(page, 'not allowed');
    expect(text).to.equal(`This code runner is not allowed on ${site.origin}: its widget key does not list this site among its allowed origins.`);
    const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(rows).to.have.length(0);
    await page.close();
  });

  it('a key at its monthly limit shows the codeoutput text, never a status', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', monthlyLimit: 0, allowedOrigins: [site.origin] });
    const page = await open('/spent', `key="${key.key}" compiler="${PY}"`);
    await (await runButton(page)).click();
    const text = await waitForOutput(page, 'monthly limit');
    expect(text).to.equal('This code runner has reached its monthly limit. It will work again next month.');
    expect(text).to.not.match(/429|key_monthly_limit/);
    await page.close();
  });

  it('reconnects after the socket drops and runs again', async () => {
    // An API process of its own, stopped and started again on the same port.
    const config = testConfig(s.db.url, loadConfig().RUNBOX_IMAGES_DIR, s.env);
    const start = (port: number) => startApi({ db: s.db.db, config: { ...config, RUNBOX_PORT: port }, clock: systemClock, maintenanceCacheMs: 0, log: { error: () => {} } });
    let api = await start(0);
    const port = api.port;
    try {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/reconnect', `key="${key.key}" compiler="${PY}" api="http://127.0.0.1:${port}"`, 'print("once")');
      await (await runButton(page)).click();
      await waitForOutput(page, 'Finished');
      await api.close();
      const status = () => page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('.status')!.textContent);
      await page.waitForFunction(() => document.querySelector('runbox-widget')!.shadowRoot!.querySelector('.status')!.textContent === 'Reconnecting…', { timeout: 30_000 });
      api = await start(port);
      // Back without the reader doing anything.
      await page.waitForFunction(() => document.querySelector('runbox-widget')!.shadowRoot!.querySelector('.status')!.textContent === '', { timeout: 60_000 });
      expect(await status()).to.equal('');
      await page.$eval('runbox-widget', (w) => ((w.shadowRoot!.querySelector('textarea') as HTMLTextAreaElement).value = 'print("twice")'));
      await (await runButton(page)).click();
      expect(await waitForOutput(page, 'Finished')).to.match(/^twice\nFinished/);
      await page.close();
    } finally {
      await api.close();
    }
  });

  it("the host page's CSS does not reach inside", async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
    const page = await open('/hostile', `key="${key.key}" compiler="${PY}"`);
    const styles = await page.evaluate(() => {
      const pick = (el: Element) => {
        const c = getComputedStyle(el);
        return { color: c.color, fontSize: c.fontSize };
      };
      const root = document.querySelector('runbox-widget')!.shadowRoot!;
      return {
        host: pick(document.getElementById('host-button')!),
        run: pick(root.querySelector('button')!),
        code: pick(root.querySelector('textarea')!),
        output: pick(root.querySelector('pre')!),
      };
    });
    // The rules apply on the page itself...
    expect(styles.host).to.deep.equal({ color: 'rgb(255, 0, 0)', fontSize: '40px' });
    // ...and not inside the widget.
    for (const inside of [styles.run, styles.code, styles.output]) {
      expect(inside.color).to.not.equal('rgb(255, 0, 0)');
      expect(inside.fontSize).to.not.equal('40px');
    }
    expect(styles.run.fontSize).to.equal('14px');
    await page.close();
  });

  it('has no serious or critical accessibility violations (axe-core), light and dark', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
    const axe = readFileSync(new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
    for (const scheme of ['light', 'dark'] as const) {
      const page = await open(`/a11y-${scheme}`, `key="${key.key}" compiler="${PY}" stdin=""`);
      await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
      await (await runButton(page)).click();
      await waitForOutput(page, 'Finished');
      await page.addScriptTag({ content: axe });
      const violations = await page.evaluate(async () => {
        const w = window as unknown as { axe: { run(ctx: unknown): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } };
        const r = await w.axe.run({ include: [['runbox-widget']] });
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
      });
      const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(bad, `${scheme}: ${JSON.stringify(violations)}`).to.deep.equal([]);
      // The dark scheme really is in force inside the shadow root.
      const background = await page.$eval('runbox-widget', (w) => getComputedStyle(w.shadowRoot!.querySelector('.box')!).backgroundColor);
      expect(background).to.equal(scheme === 'dark' ? 'rgb(13, 17, 23)' : 'rgb(255, 255, 255)');
      await page.close();
    }
  });

  it('the input box leaves Tab to the browser: Tab moves on to Run and types nothing', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
    const page = await open('/stdin-tab', `key="${key.key}" compiler="${PY}" stdin="abc"`);
    await page.locator('::-p-aria([name="Input (stdin)"][role="textbox"])').click();
    await page.keyboard.press('Tab');
    expect(await focusedText(page)).to.equal('Run');
    const value = await page.$eval('runbox-widget', (w) => (w.shadowRoot!.querySelector('#stdin') as HTMLTextAreaElement).value);
    expect(value).to.equal('abc');
    await page.close();
  });

  describe("tells the page's author what is wrong", () => {
    it("a wrong key, and a revoked one: this widget's key is not valid; nothing is counted", async () => {
      const { accountId, key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      await revokeKey(s.db.db, key.id);
      for (const [path, attr] of [['/wrong-key', 'rbx_not_a_key'], ['/revoked-key', key.key]]) {
        const page = await open(path!, `key="${attr}" compiler="${PY}"`);
        await (await runButton(page)).click();
        const text = await waitForOutput(page, 'key');
        expect(text, path).to.equal("This widget's key is not valid: it is mistyped or has been revoked. If this is your page, put a current widget key in its key attribute.");
        // Run is usable again (it does not hang on "Running…").
        expect(await page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('.status')!.textContent)).to.equal('');
        await page.close();
      }
      const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
      expect(rows).to.have.length(0);
    });

    it('an API key in a page: use a widget key (and revoke the exposed one)', async () => {
      const { key } = await keyFor(s.db);
      const page = await open('/api-key', `key="${key.key}" compiler="${PY}"`);
      await (await runButton(page)).click();
      const text = await waitForOutput(page, 'API key');
      expect(text).to.match(/^This widget uses an API key, which is a secret and does not work in web pages \(this one is on http:\/\/127\.0\.0\.2:\d+\)\./);
      expect(text).to.include('use a widget key');
      await page.close();
    });

    it('a compiler id that does not exist: the valid ids', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/bad-compiler', `key="${key.key}" compiler="python3"`);
      await (await runButton(page)).click();
      const text = await waitForOutput(page, 'does not exist');
      expect(text).to.match(/^This widget's compiler "python3" does not exist\. Valid compilers: .*\bpython-3\.9\.7\b.*\.$/);
      await page.close();
    });

    it('code with an unescaped <tag> in the element: says what to do', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/unescaped', `key="${key.key}" compiler="${PY}"`, 'print("<b>bold</b>")');
      expect(await outputText(page)).to.equal('The code lost its <b>: write < as &lt; in the element\'s text, or put the code in a <script type="text/plain"> child.');
      await page.close();
    });
  });

  it('takes the code from a <script type="text/plain"> child as it is, and from escaped text', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
    const raw = 'print("<iostream> & <b>")';
    for (const [path, body] of [
      ['/script-child', `\n<script type="text/plain">\n  ${raw}\n</script>\n`],
      ['/escaped', raw.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')],
    ]) {
      const page = await open(path!, `key="${key.key}" compiler="${PY}" interactive="false"`, body);
      const code = await page.$eval('runbox-widget', (w) => (w.shadowRoot!.querySelector('#code') as HTMLTextAreaElement).value);
      expect(code, path).to.equal(raw);
      expect(await outputText(page), `${path}: nothing was lost, so no notice`).to.equal('');
      await (await runButton(page)).click();
      expect(await waitForOutput(page, 'Finished'), path).to.match(/^<iostream> & <b>\nFinished/);
      await page.close();
    }
  });

  describe('programs of several files, expected outputs and the code editor', () => {
    const DOT_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    const inWidget = <T>(page: Page, fn: (root: ShadowRoot) => T) => page.$eval('runbox-widget', (w, f) => new Function('root', `return (${f})(root)`)(w.shadowRoot) as T, fn.toString());
    const axeOf = async (page: Page) => {
      // Evaluated through the DevTools protocol, which a page's CSP does not govern.
      await page.evaluate(readFileSync(new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8'));
      const violations = await page.evaluate(async () => {
        const w = window as unknown as { axe: { run(ctx: unknown): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } };
        return (await w.axe.run({ include: [['runbox-widget']] })).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
      });
      return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    };

    for (const w of [{ name: '1280 px', width: 1280, height: 900 }, { name: '390 px', width: 390, height: 760 }]) {
      it(`at ${w.name}: several <script data-file> children make a program in tabs; args; the image it writes is shown; axe-clean`, async () => {
        const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
        const files = `
<script type="text/plain" data-file="main.py" data-main>
  import sys
  from pics import draw
  draw.dot("/box/out/dot.png")
  print("args:", sys.argv[1:])
</script>
<script type="text/plain" data-file="pics/draw.py">
  import base64
  def dot(path):
      open(path, "wb").write(base64.b64decode("${DOT_PNG}"))
</script>
<script type="text/plain" data-file="pics/__init__.py"></script>`;
        const page = await chromium.browser.newPage();
        await page.setViewport({ width: w.width, height: w.height });
        await page.goto(site.page(`/files-${w.width}`, hostPage(s.url, `key="${key.key}" compiler="${PY}" args='["one two", "three"]'`, files)), { waitUntil: 'load' });
        await page.waitForFunction(() => !!document.querySelector('runbox-widget')?.shadowRoot);
        const tabs = await inWidget(page, (root) => [...root.querySelectorAll('[role="tab"]')].map((t) => [t.textContent, t.getAttribute('aria-selected')]));
        expect(tabs).to.deep.equal([
          ['main.py (main)', 'true'],
          ['pics/draw.py', 'false'],
          ['pics/__init__.py', 'false'],
        ]);
        // The second tab shows its file's code (the others' panels are hidden).
        await page.locator('::-p-aria([name="pics/draw.py"][role="tab"])').click();
        const shown = await inWidget(page, (root) => [...root.querySelectorAll('[role="tabpanel"]')].filter((p) => !(p as HTMLElement).hidden).map((p) => p.querySelector('label')!.textContent));
        expect(shown).to.deep.equal(['Code of pics/draw.py']);
        await (await runButton(page)).click();
        expect(await waitForOutput(page, 'Finished')).to.match(/^args: \['one two', 'three'\]\nFinished · /);
        const image = await inWidget(page, (root) => {
          const img = root.querySelector('.files img') as HTMLImageElement | null;
          return img && { alt: img.alt, width: img.naturalWidth, link: root.querySelector('.files a')?.textContent };
        });
        expect(image).to.deep.equal({ alt: 'dot.png, an image the program wrote', width: 1, link: 'dot.png' });
        expect(await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth), 'nothing scrolls sideways').to.equal(false);
        expect(await axeOf(page)).to.deep.equal([]);
        const [row] = await s.db.db.selectFrom('submissions').select(['run_options']).where('key_id', '=', key.id).execute();
        expect((row!.run_options as { args?: string[] }).args).to.deep.equal(['one two', 'three']);
        await page.close();
      });
    }

    it('an expected output (attribute, or a data-expected child): Accepted, or Wrong answer with the first lines that differ', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const right = await open('/expected-right', `key="${key.key}" compiler="${PY}" expected="4"`, 'print(2 + 2)');
      await (await runButton(right)).click();
      expect(await waitForOutput(right, 'Accepted')).to.match(/^4\nAccepted · /);
      expect(await inWidget(right, (root) => !!root.querySelector('.diff'))).to.equal(false);
      await right.close();
      const wrong = await open(
        '/expected-wrong',
        `key="${key.key}" compiler="${PY}"`,
        '<script type="text/plain">\nfor n in (1, 2, 4, 8):\n    print(n)\n</script>\n<script type="text/plain" data-expected>\n  1\n  2\n  3\n  4\n</script>',
      );
      expect(await inWidget(wrong, (root) => root.querySelector('.line')), 'a judged run is not interactive').to.equal(null);
      await (await runButton(wrong)).click();
      expect(await waitForOutput(wrong, 'Wrong answer')).to.match(/^1\n2\n4\n8\nWrong answer · /);
      const diff = await inWidget(wrong, (root) => [...root.querySelectorAll('.diff p, .diff pre')].map((e) => e.textContent));
      expect(diff).to.deep.equal(['First difference at line 3:', 'Expected', '3\n4', 'Found', '4\n8']);
      const [row] = await s.db.db.selectFrom('submissions').select(['result']).where('key_id', '=', key.id).where('input', 'is', null).orderBy('created_at', 'desc').execute();
      expect((row!.result as { verdict: string }).verdict).to.equal('wrong_answer');
      expect(await axeOf(wrong)).to.deep.equal([]);
      await wrong.close();
    });

    it('editor: fetches the code editor as a separate asset (never without the attribute), highlighted, editable and run, on a page whose CSP allows no inline style; axe-clean', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const editorRequests: string[] = [];
      const plain = await chromium.browser.newPage();
      plain.on('request', (r) => r.url().includes('/widget/editor/') && editorRequests.push(r.url()));
      await plain.goto(site.page('/no-editor', hostPage(s.url, `key="${key.key}" compiler="${PY}"`, 'print(1)')), { waitUntil: 'networkidle0' });
      expect(editorRequests, 'no editor asset without the attribute').to.deep.equal([]);
      await plain.close();

      const ws = s.url.replace('http', 'ws');
      const strict = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Strict page</title>
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src ${s.url}; connect-src ${ws} ${s.url}; style-src 'self'; img-src data:">
<script type="module" src="${s.url}/widget/v1.js"></script></head>
<body><main><h1>Strict page</h1><runbox-widget key="${key.key}" compiler="${PY}" editor interactive="false">def f():
    return 1
print(f())</runbox-widget></main></body></html>`;
      const page = await chromium.browser.newPage();
      page.on('request', (r) => r.url().includes('/widget/editor/') && editorRequests.push(r.url()));
      const refused: string[] = [];
      page.on('console', (m) => /Content Security Policy/i.test(m.text()) && refused.push(m.text()));
      await page.evaluateOnNewDocument(() => {
        (window as unknown as { csp: string[] }).csp = [];
        document.addEventListener('securitypolicyviolation', (e) => (window as unknown as { csp: string[] }).csp.push(`${e.violatedDirective} ${e.blockedURI}`), true);
      });
      await page.goto(site.page('/editor', strict), { waitUntil: 'load' });
      await page.waitForSelector('runbox-widget[data-editor="ready"]', { timeout: 30_000 });
      expect(editorRequests.length, 'the editor came as assets of its own').to.be.greaterThan(0);
      // The language's chunk comes after the editor shows: Python's highlighting, once it has come.
      await page.waitForFunction(
        () => {
          const inner = document.querySelector('runbox-widget')!.shadowRoot!.querySelector('.code-editor')!.shadowRoot!;
          return [...inner.querySelectorAll('.cm-content span')].some((x) => x.textContent === 'def');
        },
        { timeout: 15_000 },
      );
      const look = await inWidget(page, (root) => {
        const inner = root.querySelector('.code-editor')!.shadowRoot!;
        const keyword = [...inner.querySelectorAll('.cm-content span')].find((x) => x.textContent === 'def');
        return {
          textarea: root.querySelectorAll('textarea').length,
          label: inner.querySelector('.cm-content')!.getAttribute('aria-label'),
          keyword: keyword ? getComputedStyle(keyword).color : null,
          lines: inner.querySelectorAll('.cm-lineNumbers .cm-gutterElement').length > 1,
        };
      });
      expect(look).to.deep.equal({ textarea: 0, label: 'Code (python-3.9.7)', keyword: 'rgb(160, 17, 31)', lines: true });
      await page.locator('::-p-aria([name="Code (python-3.9.7)"][role="textbox"])').click();
      await pressWithControl(page, 'End');
      await page.keyboard.type('\nprint(2)');
      await pressWithControl(page, 'Enter');
      expect(await waitForOutput(page, 'Finished')).to.match(/^1\n2\nFinished · /);
      expect(await page.evaluate(() => (window as unknown as { csp: string[] }).csp)).to.deep.equal([]);
      expect(refused, refused.join('\n')).to.deep.equal([]);
      expect(await axeOf(page)).to.deep.equal([]);
      await page.close();
    });
  });

  describe('interactive runs', () => {
    const lineOf = (page: Page) => page.$eval('runbox-widget', (w) => {
      const row = w.shadowRoot!.querySelector('.line') as HTMLElement | null;
      return row ? { hidden: row.hidden, label: row.querySelector('label')!.textContent } : null;
    });

    it("answers Python's input() prompt typed into the input line, echoed and marked as input", async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/interactive', `key="${key.key}" compiler="${PY}"`, 'name = input("Name? ")\nprint(f"Hello, {name}!")');
      expect(await lineOf(page)).to.deep.equal({ hidden: true, label: 'Input to the program (Enter sends a line, Ctrl+D ends input)' });
      await (await runButton(page)).click();
      // The prompt arrives before anything is typed.
      expect(await waitForOutput(page, 'Name? ')).to.equal('Name? ');
      expect((await lineOf(page))!.hidden).to.equal(false);
      await page.locator('::-p-aria([name="Input to the program (Enter sends a line, Ctrl+D ends input)"][role="textbox"])').click();
      await page.keyboard.type('Ann');
      await page.keyboard.press('Enter');
      const text = await waitForOutput(page, 'Finished');
      expect(text).to.match(/^Name\? Input: Ann\nHello, Ann!\nFinished · /);
      const echo = await page.$eval('runbox-widget', (w) => {
        const mark = w.shadowRoot!.querySelector('[role="log"] .stdin')!;
        return { text: mark.textContent, hidden: mark.querySelector('.visually-hidden')?.textContent, color: getComputedStyle(mark).color, out: getComputedStyle(mark.parentElement!).color };
      });
      expect(echo.text).to.equal('Input: Ann\n');
      expect(echo.hidden).to.equal('Input: ');
      expect(echo.color, 'the echo looks unlike the output').to.not.equal(echo.out);
      // The line is gone with the run, and the focus that was in it is back on Run.
      expect((await lineOf(page))!.hidden).to.equal(true);
      expect(await focusedText(page)).to.equal('Run');
      const rows = await s.db.db.selectFrom('submissions').select('mode').where('key_id', '=', key.id).execute();
      expect(rows).to.deep.equal([{ mode: 'ws' }]);
      await page.close();
    });

    it('Run moves the focus to the input line, where the program waits for what is typed', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/interactive-focus', `key="${key.key}" compiler="${PY}"`, 'print(input()[::-1])');
      await (await runButton(page)).click();
      await page.waitForFunction(() => document.querySelector('runbox-widget')!.shadowRoot!.activeElement?.id === 'line', { timeout: 30_000 });
      // Typed straight away, with no click on the line first.
      await page.keyboard.type('olleh');
      await page.keyboard.press('Enter');
      expect(await waitForOutput(page, 'Finished')).to.match(/^Input: olleh\nhello\nFinished · /);
      await page.close();
    });

    it('a second Run within the connection\'s one run a second is queued and runs, not refused', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/queued', `key="${key.key}" compiler="${PY}" stdin="x"`, 'print("ran")');
      await (await runButton(page)).click();
      await waitForOutput(page, 'Finished');
      // At once again: within the second the server refuses a run of this connection.
      await (await runButton(page)).click();
      const text = await waitForOutput(page, 'Finished');
      expect(text).to.match(/^ran\nFinished · /);
      expect(text).not.to.include('One run per second');
      const rows = await s.db.db.selectFrom('submissions').select('mode').where('key_id', '=', key.id).execute();
      expect(rows).to.have.length(2);
      await page.close();
    });

    it('Ctrl+D sends what is typed and ends the input; the End input button does the same', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const code = 'import sys\nprint("ready", flush=True)\ndata = sys.stdin.read()\nprint(repr(data))';
      const page = await open('/eof', `key="${key.key}" compiler="${PY}"`, code);
      await (await runButton(page)).click();
      await waitForOutput(page, 'ready');
      await page.locator('::-p-aria([name="Input to the program (Enter sends a line, Ctrl+D ends input)"][role="textbox"])').click();
      await page.keyboard.type('one');
      await page.keyboard.press('Enter');
      await page.keyboard.type('two');
      await pressWithControl(page, 'd');
      expect(await waitForOutput(page, 'Finished')).to.match(/^ready\nInput: one\nInput: two'one\\ntwo'\nFinished/);
      await new Promise((r) => setTimeout(r, 1100));
      await (await runButton(page)).click();
      await waitForOutput(page, 'ready');
      await page.locator('::-p-aria([name="End input"][role="button"])').click();
      expect(await waitForOutput(page, 'Finished')).to.match(/^ready\n''\nFinished/);
      await page.close();
    });

    it('interactive="false": no input line, and the run is not interactive (reading stdin ends at once)', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page = await open('/not-interactive', `key="${key.key}" compiler="${PY}" interactive="false"`, 'import sys\nprint(repr(sys.stdin.read()))');
      expect(await lineOf(page)).to.equal(null);
      await (await runButton(page)).click();
      expect(await waitForOutput(page, 'Finished')).to.match(/^''\nFinished/);
      await page.close();
    });

    it('has no serious or critical accessibility violations with the input line showing', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const axe = readFileSync(new URL('../../../node_modules/axe-core/axe.min.js', import.meta.url), 'utf8');
      for (const scheme of ['light', 'dark'] as const) {
        const page = await open(`/a11y-line-${scheme}`, `key="${key.key}" compiler="${PY}"`, 'print(input("? "))');
        await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
        await (await runButton(page)).click();
        // Checked while the line shows: the program waits for input.
        await page.waitForFunction(() => !(document.querySelector('runbox-widget')!.shadowRoot!.querySelector('.line') as HTMLElement).hidden && (document.querySelector('runbox-widget')!.shadowRoot!.querySelector('[role="log"]')!.textContent ?? '').includes('? '), { timeout: 60_000 });
        await page.addScriptTag({ content: axe });
        const violations = await page.evaluate(async () => {
          const w = window as unknown as { axe: { run(ctx: unknown): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } };
          const r = await w.axe.run({ include: [['runbox-widget']] });
          return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
        });
        const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
        expect(bad, `${scheme}: ${JSON.stringify(violations)}`).to.deep.equal([]);
        await page.close();
      }
    });
  });
});
