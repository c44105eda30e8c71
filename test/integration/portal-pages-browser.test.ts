import { expect } from 'chai';
import type { BrowserContext, Page } from 'puppeteer-core';
import { problemFromJson } from '../../src/problems/json.js';
import { saveProblem } from '../../src/problems/store.js';
import { claim, complete } from '../../src/queue/index.js';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { browserUnavailable, byLabel, byText, clickAndWait, fill, launchBrowser, pressWithControl, seriousAxeViolations, tabTo, type TestBrowser } from '../helpers/browser.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { enqueue } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';

// The portal's pages in a real Chromium, at a desktop's width and at a phone's (390 px):
// no page scrolls sideways, every page is axe-clean, sign-up errors all at once with
// the focus on the first, a new key shown once (a reload shows nothing and makes no
// second key), "Copied" announced, widget keys, the revoked-keys switch, a
// submission's readable result, and the documentation from the footer; by keyboard.

const PASSWORD = 'correct horse battery';
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

describe('portal pages in a browser', function () {
  this.timeout(180_000);
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let tb: TestBrowser;

  before(async function () {
    const why = browserUnavailable();
    if (why) {
      console.log(`SKIPPED: ${why}`);
      this.skip();
    }
    t = await freshDatabase('portal_pages_browser');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir), clock: new TestClock() });
    tb = await launchBrowser();
  });
  after(async () => {
    await tb?.close();
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  for (const vp of VIEWPORTS) {
    describe(`at ${vp.width} px (${vp.name})`, () => {
      let ctx: BrowserContext;
      let page: Page;
      const email = `browser-${vp.name}-${process.pid}@example.com`;
      let apiKeyId = '';
      let submissionId = '';

      const goto = async (path: string) => (await page.goto(api.url + path, { waitUntil: 'load' }))!;
      const text = () => page.$eval('main', (m) => (m as HTMLElement).innerText);
      const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
      // autofocus is applied at the page's next rendering update, not by its load event:
      // the focus is awaited (a few seconds at most), then read.
      const focusedOn = async (id: string) => {
        await page.waitForFunction((want) => document.activeElement?.id === want, { timeout: 5000 }, id).catch(() => {});
        return focused();
      };
      /** The page fits the viewport: nothing makes it scroll sideways; and axe finds nothing serious. */
      const checkPage = async (where: string) => {
        const { scroll, width, wide } = await page.evaluate(() => ({
          scroll: document.documentElement.scrollWidth,
          width: window.innerWidth,
          // What sticks out, for the message.
          wide: [...document.querySelectorAll('body *')]
            .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
            .slice(0, 5)
            .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}${e.className ? `.${String(e.className)}` : ''}: ${(e.textContent ?? '').slice(0, 60)}`),
        }));
        expect(scroll, `${where} scrolls sideways at ${vp.width} px: ${wide.join(' | ')}`).to.be.at.most(width);
        const v = await seriousAxeViolations(page);
        expect(v, `axe on ${where} at ${vp.width} px: ${JSON.stringify(v)}`).to.deep.equal([]);
      };

      before(async () => {
        ctx = await tb.browser.createBrowserContext();
        page = await ctx.newPage();
        await page.setViewport({ width: vp.width, height: vp.height });
      });
      after(() => ctx?.close());

      it('shows every sign-up error at once with the focus on the first, then signs up', async () => {
        await goto('/signup');
        await checkPage('/signup');
        await fill(page, 'Email', 'not an address');
        await fill(page, 'Password', 'short');
        await clickAndWait(page, await byText(page, 'Sign up', 'button'));
        const errors = await page.$$eval('.field-error', (es) => es.map((e) => e.id));
        expect(errors).to.deep.equal(['f-email-error', 'f-password-error']);
        expect(await focusedOn('f-email')).to.equal('f-email');
        await checkPage('/signup with errors');
        // The focused field is the one to fix: type over it.
        await pressWithControl(page, 'a');
        await page.keyboard.type(email);
        await fill(page, 'Password', PASSWORD);
        await clickAndWait(page, await byText(page, 'Sign up', 'button'));
        expect(new URL(page.url()).pathname).to.equal('/');
        await checkPage('/ (dashboard)');
      });

      it('creates a key by keyboard, shows it once with "Copied" announced; a reload shows nothing and makes no second key', async () => {
        await goto('/keys/new');
        await checkPage('/keys/new');
        await tabTo(page, 'App Name', (e) => e.label === 'App Name');
        await page.keyboard.type('first app');
        await tabTo(page, 'Create', (e) => e.tag === 'BUTTON' && e.text === 'Create');
        await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
        expect(new URL(page.url()).pathname).to.match(/^\/keys\/\d+\/created$/);
        apiKeyId = /\/keys\/(\d+)\//.exec(page.url())![1]!;
        const key = await (await byLabel(page, 'API key')).evaluate((e) => (e as HTMLInputElement).value);
        expect(key).to.match(/^rbx_/);
        await checkPage('key created');

        await tabTo(page, 'Copy API key', (e) => e.tag === 'BUTTON' && e.text === 'Copy');
        await page.keyboard.press('Enter');
        await page.waitForFunction(() => document.getElementById('live-status')?.textContent === 'Copied');
        expect(await page.$eval('#live-status', (e) => [e.getAttribute('role'), e.getAttribute('aria-live')])).to.deep.equal(['status', 'polite']);

        await page.reload({ waitUntil: 'load' });
        expect(new URL(page.url()).pathname).to.equal(`/keys/${apiKeyId}`);
        expect(await page.content()).not.to.include(key);
        expect(await text()).to.include('cannot show it again');
        await checkPage('/keys/:id after the reload');
        const count = await t.db.selectFrom('api_keys as k').innerJoin('accounts as a', 'a.id', 'k.account_id').select('k.id').where('a.email', '=', email).execute();
        expect(count).to.have.length(1);
      });

      it('refuses a widget key without an allowed origin, focusing the field; then shows "Widget key" and no signing secret', async () => {
        await goto('/keys/new');
        await fill(page, 'App Name', 'blog widget');
        await (await page.$('#kind-widget'))!.click();
        await clickAndWait(page, await byText(page, 'Create', 'button'));
        expect(await focusedOn('f-allowed_origins')).to.equal('f-allowed_origins');
        expect(await text()).to.include('a widget key needs at least one allowed origin');
        await checkPage('/keys (widget key refused)');
        await page.keyboard.type('https://blog.example');
        await clickAndWait(page, await byText(page, 'Create', 'button'));
        expect(await page.$eval('h1', (h) => h.textContent)).to.equal('Key created');
        const widgetKey = await (await byLabel(page, 'Widget key')).evaluate((e) => (e as HTMLInputElement).value);
        expect(await page.$('#new-secret')).to.equal(null);
        const snippet = await (await byLabel(page, 'Embed snippet')).evaluate((e) => (e as HTMLTextAreaElement).value);
        expect(snippet).to.include(`key="${widgetKey}"`);
        await page.waitForFunction(() => !!document.querySelector('[data-widget-preview] runbox-widget')?.shadowRoot?.querySelector('button'));
        await checkPage('widget key created');
        const id = /\/keys\/(\d+)\//.exec(page.url())![1]!;
        await goto(`/keys/${id}`);
        const placeholder = await (await byLabel(page, 'Embed snippet')).evaluate((e) => (e as HTMLTextAreaElement).value);
        expect(placeholder).to.include('key="YOUR_WIDGET_KEY"').and.not.include('…');
        await checkPage('/keys/:id (widget key)');
        await goto('/keys');
        expect(await page.$eval(`tr[data-key-id="${id}"] [data-field="allowed_origins"]`, (e) => e.textContent)).to.equal('https://blog.example');
        await checkPage('/keys');
      });

      it('hides a revoked key until "Show revoked keys" is chosen by keyboard, on the list and the dashboard', async () => {
        await goto(`/keys/${apiKeyId}/revoke`);
        await checkPage('/keys/:id/revoke');
        await clickAndWait(page, await byText(page, 'Revoke key', 'button'));
        expect(await text()).to.include('The key is revoked');
        expect(await page.$(`tr[data-key-id="${apiKeyId}"]`)).to.equal(null);
        await tabTo(page, 'Show revoked keys (1)', (e) => e.text === 'Show revoked keys (1)');
        await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
        expect(await page.$(`tr[data-key-id="${apiKeyId}"]`)).not.to.equal(null);
        await goto('/');
        expect(await page.$(`tr[data-key-id="${apiKeyId}"]`)).not.to.equal(null);
        await clickAndWait(page, await byText(page, 'Hide revoked keys', 'a'));
        expect(await page.$(`tr[data-key-id="${apiKeyId}"]`)).to.equal(null);
        await checkPage('/ (revoked hidden)');
      });

      it("shows a submission's code, input and result as fields, the raw JSON behind a toggle the keyboard opens", async () => {
        const account = await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow();
        submissionId = await enqueue(t.db, String(account.id), { keyId: apiKeyId, code: `print("${'a very long line of output '.repeat(8)}")\n`, input: 'some input' });
        const [job] = await claim(t.db, `browser-${vp.name}`, 1, 60);
        await complete(t.db, `browser-${vp.name}`, job!.id, successResult(job!.id, { output: `${'a very long line of output '.repeat(8)}\n`, time: 0.041, memory: 2765 }));
        await goto('/submissions');
        await checkPage('/submissions');
        await clickAndWait(page, (await page.$(`tr[data-submission-id="${submissionId}"] a`))!);
        await checkPage('/submissions/:id');
        const fields = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('[data-field]')].map((e) => [e.getAttribute('data-field')!, (e as HTMLElement).innerText])));
        expect(fields['result.status']).to.equal('success');
        expect(fields['result.time']).to.equal('41 ms');
        expect(fields['result.memory']).to.equal('2.7 MB');
        expect(fields['input']).to.equal('some input');
        expect(await page.$eval('[data-field="result.output"]', (e) => e.tagName)).to.equal('PRE');
        expect(await page.$eval('details.raw', (d) => (d as HTMLDetailsElement).open)).to.equal(false);
        await tabTo(page, 'the raw JSON toggle', (e) => e.tag === 'SUMMARY');
        await page.keyboard.press('Enter');
        expect(await page.$eval('details.raw', (d) => (d as HTMLDetailsElement).open)).to.equal(true);
        expect(JSON.parse(await page.$eval('[data-field="json"]', (e) => e.textContent ?? ''))).to.include({ id: submissionId, state: 'finished' });
        await checkPage('/submissions/:id (raw JSON open)');
        // One date form.
        const dates = await page.$$eval('time', (ts) => ts.map((x) => x.textContent));
        expect(dates.length).to.be.greaterThan(0);
        for (const d of dates) expect(d).to.match(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
      });

      it('leaves no page scrolling sideways and every page axe-clean; the footer leads to the documentation', async () => {
        const accountId = (await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
        const problem = await saveProblem(
          t.db,
          accountId,
          problemFromJson({
            name: 'A problem whose name is long enough to wrap on a phone',
            tests: [
              { name: 'sample/with-a-long-name-01', input: '1 2\n', expected_output: '3\n', sample: true },
              { name: 'secret/1', input: 'x'.repeat(5000), expected_output: 'y\n' },
            ],
          }),
        );
        const pages = ['/', '/keys', `/keys/${apiKeyId}`, '/submissions', `/submissions/${submissionId}`, '/playground', '/problems', `/problems/${problem!.id}`, `/problems/${problem!.id}/delete`];
        for (const path of [...pages, '/account', '/docs/', '/docs/api', '/docs/configuration', '/no/such/page']) {
          await goto(path);
          await checkPage(path);
        }
        await goto('/account');
        await clickAndWait(page, await byText(page, 'Documentation', 'footer a'));
        expect(new URL(page.url()).pathname).to.equal('/docs/');
        expect(await page.$$eval('nav[aria-label="Documents"] a', (as) => as.length)).to.be.greaterThan(3);
        await clickAndWait(page, await byText(page, 'Log out', 'button'));
        for (const path of ['/login', '/signup', '/forgot', '/docs/']) {
          await goto(path);
          await checkPage(`${path} (logged out)`);
        }
        expect(await text()).to.include('API reference');
        await goto('/forgot');
        expect(await text()).to.include('Ask the operator of this service');
      });
    });
  }
});
