import { expect } from 'chai';
import { createKey } from '../../src/accounts/keys.js';
import { loadConfig } from '../../src/config.js';
import { problemFromJson } from '../../src/problems/json.js';
import { saveProblem } from '../../src/problems/store.js';
import { browserUnavailable, hostSite, launchBrowser, type HostSite, type TestBrowser } from '../helpers/browser.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';

// A widget exercise against a stored problem with `samples` feedback, in real Chromium:
// the host page (a second loopback origin) embeds <runbox-widget problem="ID">, the
// widget shows the problem's name and samples, the run is judged through the real API,
// runner and sandbox, and the verdict, score and each test's verdict are shown. The
// page's source, its DOM and every WebSocket frame the page received are searched for
// the hidden test's input and expected output.

const PY = 'python-3.9.7';
const HIDDEN_IN = 'hq4e8d';
const HIDDEN_ANSWER = 'hz1b6f';
// A statement with the Markdown a widget renders, and markup it must leave as text.
const STATEMENT = [
  '# Echo',
  'Read a line and print it with **in** replaced by `out`.',
  '',
  '- one line in',
  '- one line out',
  '',
  'See [the guide](https://example.org/guide) and [this](javascript:alert(1)).',
  '',
  '<img src=x onerror="window.__statementRan=1">',
].join('\n');
const CODE = 'import sys\nd = sys.stdin.read()\nprint(d.strip().replace("in", "out"))\nsys.stderr.write(d)';

describe('a widget exercise against a stored problem (samples feedback), in Chromium', function () {
  let s: ResultsStack;
  let chromium: TestBrowser;
  let site: HostSite;

  before(async function () {
    const why = browserUnavailable() ?? realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('widget_exercise', { RUNBOX_SANDBOX_UID_BASE: String(loadConfig().RUNBOX_SANDBOX_UID_BASE + TEST_SLOT_BASE + 10) });
    await s.startRunner();
    site = await hostSite();
    chromium = await launchBrowser();
  });
  after(async () => {
    await chromium?.close();
    await site?.close();
    await s?.close();
  });

  it('shows the statement and samples, judges the code, shows verdict, score and tests; no hidden input or answer reaches the page', async () => {
    const { accountId } = await keyFor(s.db);
    // Stored as the portal's form stores it (Markdown beside the JSON fields).
    const draft = problemFromJson({
      name: 'Echo out',
      tests: [
        { name: 'sample-1', input: 'sample in\n', expected_output: 'sample out\n', sample: true },
        { name: 'hidden-1', input: `${HIDDEN_IN} in\n`, expected_output: `${HIDDEN_ANSWER}\n` },
      ],
    });
    const problem = (await saveProblem(s.db.db, accountId, { ...draft, statement: { format: 'markdown', text: STATEMENT } }, undefined, { feedback: 'samples' }))!.id;
    const widget = await createKey(s.db.db, { accountId, appName: 'course', kind: 'widget', allowedOrigins: [site.origin] });
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Exercise 1</title>
<script type="module" src="${s.url}/widget/v1.js"></script></head>
<body><main><h1>Exercise 1</h1>
<runbox-widget key="${widget.key}" compiler="${PY}" problem="${problem}" stdin="given">print(input())</runbox-widget></main></body></html>`;
    const page = await chromium.browser.newPage();
    const frames: string[] = [];
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    cdp.on('Network.webSocketFrameReceived', (e: { response: { payloadData: string } }) => frames.push(e.response.payloadData));
    await page.goto(site.page('/exercise', html), { waitUntil: 'load' });
    const inShadow = (sel: string) => page.$eval('runbox-widget', (w, q) => Array.from(w.shadowRoot!.querySelectorAll(q as string)).map((n) => n.textContent ?? ''), sel);
    await page.waitForFunction(() => (document.querySelector('runbox-widget')?.shadowRoot?.querySelector('.exercise')?.textContent ?? '').includes('Echo out'), { timeout: 60_000 });
    const exercise = (await inShadow('.exercise')).join('');
    expect(exercise).to.include('Echo out').and.include('sample in').and.include('sample out');
    // The statement, rendered: heading, emphasis, inline code, list, an http(s) link; the rest as text.
    const statement = await page.$eval('runbox-widget', (w) => {
      const box = w.shadowRoot!.querySelector('.statement')!;
      return {
        text: box.textContent ?? '',
        heading: box.querySelector('h4')?.textContent,
        strong: box.querySelector('strong')?.textContent,
        code: box.querySelector('code')?.textContent,
        items: Array.from(box.querySelectorAll('ul li')).map((li) => li.textContent),
        links: Array.from(box.querySelectorAll('a')).map((a) => a.getAttribute('href')),
        elements: Array.from(box.querySelectorAll('*')).map((n) => n.tagName.toLowerCase()),
      };
    });
    expect(statement).to.deep.include({ heading: 'Echo', strong: 'in', code: 'out', items: ['one line in', 'one line out'], links: ['https://example.org/guide'] });
    expect(statement.text).to.include('[this](javascript:alert(1))').and.include('<img src=x onerror=');
    expect(statement.elements.filter((t) => !['h4', 'p', 'strong', 'code', 'ul', 'li', 'a'].includes(t))).to.deep.equal([]);
    expect(await page.evaluate(() => (window as unknown as { __statementRan?: number }).__statementRan)).to.equal(undefined);
    // The problem's tests give the input: no input box of the page's own.
    expect(await page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('#stdin'))).to.equal(null);

    await page.$eval('runbox-widget', (w, code) => (w.shadowRoot!.querySelector('textarea')!.value = code as string), CODE);
    await page.locator('::-p-aria([name="Run"][role="button"])').setTimeout(30_000).click();
    await page.waitForFunction(() => !!document.querySelector('runbox-widget')?.shadowRoot?.querySelector('.verdict'), { timeout: 120_000 });
    const verdict = (await inShadow('.verdict')).join('');
    expect(verdict).to.match(/^Wrong answer/).and.include('score 50%');
    expect(await inShadow('.tests li')).to.deep.equal(['sample-1: Accepted', 'hidden-1: Wrong answer']);

    const result = frames.map((f) => JSON.parse(f) as { type: string }).find((m) => m.type === 'result');
    expect(result, frames.join('\n')).to.include({ verdict: 'wrong_answer', score: 0.5 });
    // The sample's own output comes back; the hidden test's does not.
    expect(JSON.stringify(result)).to.include('sample out');
    const everything = [html, await page.content(), await page.$eval('runbox-widget', (w) => w.shadowRoot!.innerHTML), ...frames].join('\n');
    expect(everything).to.not.include(HIDDEN_IN);
    expect(everything).to.not.include(HIDDEN_ANSWER);
    await page.close();
  });

  it('a LaTeX statement is shown as its source with a note, not typeset', async () => {
    const { accountId } = await keyFor(s.db);
    // A package's LaTeX statement, as a package upload stores it.
    const draft = problemFromJson({ name: 'Sum', tests: [{ name: 'hidden-1', input: `${HIDDEN_IN}\n`, expected_output: `${HIDDEN_ANSWER}\n` }] });
    const problem = (await saveProblem(s.db.db, accountId, { ...draft, statement: { format: 'latex', text: '\\problemname{Sum} Print $a+b$.' } }, undefined, { feedback: 'verdict' }))!.id;
    const widget = await createKey(s.db.db, { accountId, appName: 'course', kind: 'widget', allowedOrigins: [site.origin] });
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Exercise 3</title>
<script type="module" src="${s.url}/widget/v1.js"></script></head>
<body><main><runbox-widget key="${widget.key}" compiler="${PY}" problem="${problem}">print(1)</runbox-widget></main></body></html>`;
    const page = await chromium.browser.newPage();
    const frames: string[] = [];
    const cdp = await page.createCDPSession();
    await cdp.send('Network.enable');
    cdp.on('Network.webSocketFrameReceived', (e: { response: { payloadData: string } }) => frames.push(e.response.payloadData));
    await page.goto(site.page('/exercise-3', html), { waitUntil: 'load' });
    await page.waitForFunction(() => !!document.querySelector('runbox-widget')?.shadowRoot?.querySelector('.statement'), { timeout: 60_000 });
    const shown = await page.$eval('runbox-widget', (w) => ({ note: w.shadowRoot!.querySelector('.statement .hint')?.textContent, source: w.shadowRoot!.querySelector('.statement pre')?.textContent }));
    expect(shown).to.deep.equal({ note: 'The statement is in LaTeX; its source:', source: '\\problemname{Sum} Print $a+b$.' });
    const answer = frames.map((f) => JSON.parse(f) as { type: string; problem?: { statement_format?: string } }).find((m) => m.type === 'problem');
    expect(answer?.problem?.statement_format).to.equal('latex');
    const everything = [await page.content(), await page.$eval('runbox-widget', (w) => w.shadowRoot!.innerHTML), ...frames].join('\n');
    expect(everything).to.not.include(HIDDEN_IN);
    expect(everything).to.not.include(HIDDEN_ANSWER);
    await page.close();
  });

  it('an exercise with an expected output keeps the input it was given: the input box is read-only', async () => {
    const { accountId } = await keyFor(s.db);
    const widget = await createKey(s.db.db, { accountId, appName: 'course', kind: 'widget', allowedOrigins: [site.origin] });
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Exercise 2</title>
<script type="module" src="${s.url}/widget/v1.js"></script></head>
<body><main><runbox-widget key="${widget.key}" compiler="${PY}" stdin="abc" expected="cba">print(input()[::-1])</runbox-widget></main></body></html>`;
    const page = await chromium.browser.newPage();
    await page.goto(site.page('/exercise-2', html), { waitUntil: 'load' });
    await page.waitForFunction(() => !!document.querySelector('runbox-widget')?.shadowRoot?.querySelector('#stdin'));
    expect(await page.$eval('runbox-widget', (w) => (w.shadowRoot!.querySelector('#stdin') as HTMLTextAreaElement).readOnly)).to.equal(true);
    await page.locator('::-p-aria([name="Run"][role="button"])').setTimeout(30_000).click();
    await page.waitForFunction(() => !!document.querySelector('runbox-widget')?.shadowRoot?.querySelector('.verdict'), { timeout: 120_000 });
    expect((await page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('.verdict')!.textContent)) ?? '').to.match(/^Accepted/);
    await page.close();
  });
});
