import { expect } from 'chai';
import type { BrowserContext, Page } from 'puppeteer-core';
import { createKey } from '../../src/accounts/keys.js';
import { fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { browserUnavailable, byText, clickAndWait, fill, launchBrowser, seriousAxeViolations, type TestBrowser } from '../helpers/browser.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { enqueue } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';

// A teacher's pages in a real Chromium, at a desktop's width and a phone's (390 px): a
// problem made in the form (its statement shown, its tests), the grading list filtered
// by that problem with its CSV export, tables that read without words broken over
// lines, nothing scrolling sideways, axe-clean.

const PASSWORD = 'correct horse battery';
const VIEWPORTS = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const;

describe('problems and grading in a browser', function () {
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
    t = await freshDatabase('grading_browser');
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
      const email = `grading-${vp.name}-${process.pid}@example.com`;
      let problemId = '';

      const goto = async (path: string) => (await page.goto(api.url + path, { waitUntil: 'load' }))!;
      const checkPage = async (where: string) => {
        const scroll = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(scroll, `${where} scrolls sideways`).to.be.at.most(0);
        const v = await seriousAxeViolations(page);
        expect(v, `axe on ${where}: ${JSON.stringify(v)}`).to.deep.equal([]);
      };
      /**
       * Cells of the table whose one or two words wrap over more than three lines (a word
       * broken letter by letter), as "text: lines". The lines are those of the cell's text
       * itself (its text nodes' boxes), not the cell's height, which a taller cell of its row sets.
       */
      const brokenCells = (table: string) =>
        page.$$eval(`${table} td, ${table} th`, (cells) =>
          cells
            .map((c) => {
              const tops = new Set<number>();
              const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
              for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
                const range = document.createRange();
                range.selectNodeContents(n);
                for (const r of Array.from(range.getClientRects())) if (r.width > 0) tops.add(Math.round(r.top));
              }
              return { text: c.textContent!.trim(), lines: tops.size };
            })
            .filter((c) => c.text.split(/\s+/).length <= 2 && c.lines > 3)
            .map((c) => `${c.text}: ${c.lines}`),
        );

      before(async () => {
        ctx = await tb.browser.createBrowserContext();
        page = await ctx.newPage();
        await page.setViewport({ width: vp.width, height: vp.height });
        await goto('/signup');
        await fill(page, 'Email', email);
        await fill(page, 'Password', PASSWORD);
        await clickAndWait(page, await byText(page, 'Sign up', 'button'));
      });
      after(() => ctx?.close());

      it('makes a problem in the form: the statement shown, the tests there, the id to copy', async () => {
        await goto('/problems');
        await clickAndWait(page, await byText(page, 'New problem…', 'a'));
        await checkPage('/problems/new');
        await fill(page, 'Name', `Sum at ${vp.name}`);
        await fill(page, 'Statement (Markdown)', 'Print **a + b**.');
        await fill(page, 'Test 1 input', '1 2');
        await fill(page, 'Test 1 expected output', '3');
        await page.click('input[name="test_1_sample"]');
        await fill(page, 'Test 2 input', '5 5');
        await fill(page, 'Test 2 expected output', '10');
        await clickAndWait(page, await byText(page, 'Save problem', 'button'));
        expect(await page.$eval('h1', (h) => h.textContent)).to.equal(`Sum at ${vp.name}`);
        expect(await page.$eval('.statement', (s) => s.innerHTML)).to.equal('<p>Print <strong>a + b</strong>.</p>');
        problemId = await page.$eval('#problem-id', (i) => (i as HTMLInputElement).value);
        expect(problemId).to.match(/^[0-9a-f-]{36}$/);
        // The test that is no sample: folded, its data there when opened.
        await page.click('details[data-test-data="2"] summary');
        expect(await page.$eval('details[data-test-data="2"]', (d) => (d as HTMLElement).innerText)).to.include('5 5').and.include('10');
        await checkPage('/problems/:id');
        expect(await brokenCells('[aria-label="Tests"] table')).to.deep.equal([]);
      });

      it('lists its submissions with verdict and score, filters by problem, and exports the CSV', async () => {
        const accountId = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
        for (const [verdict, score] of [['accepted', 1], ['wrong_answer', 0]] as const) {
          const id = await enqueue(t.db, accountId, {});
          await t.db
            .updateTable('submissions')
            .set({
              state: 'finished',
              result: JSON.stringify(successResult(id, { verdict, score })),
              run_options: JSON.stringify({ judge: { checker: { type: 'lines' }, interactor: null, stop_on_failure: false, problem: { id: problemId, version: 1 } } }),
            })
            .where('id', '=', id)
            .execute();
        }
        await enqueue(t.db, accountId, {}); // a plain queued run, not this problem's
        await goto('/submissions');
        await checkPage('/submissions');
        expect(await page.$$eval('tr[data-submission-id]', (r) => r.length)).to.equal(3);
        await page.select('#f-problem', problemId);
        await clickAndWait(page, await byText(page, 'Filter', 'button'));
        const rows = await page.$$eval('tr[data-submission-id]', (trs) => trs.map((tr) => [tr.querySelector('[data-field="verdict"]')!.textContent, tr.querySelector('[data-field="score"]')!.textContent]));
        expect(rows).to.deep.equal([
          ['Wrong answer', '0%'],
          ['Accepted', '100%'],
        ]);
        await checkPage('/submissions?problem=…');
        expect(await brokenCells('.graded')).to.deep.equal([]);
        const href = await page.$eval('a[download="submissions.csv"]', (a) => (a as HTMLAnchorElement).href);
        expect(href).to.include(`problem=${problemId}`);
        // The export as the page's own session fetches it.
        const csv = await page.evaluate(async (u) => (await fetch(u)).text(), href);
        const lines = csv.trimEnd().split('\r\n');
        expect(lines[0]).to.match(/^id,created_at,problem_id,problem_name/);
        expect(lines.slice(1).map((l) => l.split(',')[10])).to.deep.equal(['wrong_answer', 'accepted']);
        // The problem's page lists them too.
        await goto(`/problems/${problemId}`);
        expect(await page.$$eval('#submissions-h ~ .table-box tr[data-submission-id]', (r) => r.length)).to.equal(2);
      });

      it('lists keys (the keys page, the dashboard) and problems without words broken over lines', async () => {
        const accountId = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
        await createKey(t.db, { accountId, appName: 'Course autograder', kind: 'api', redirectUrl: 'https://course.example.edu/runbox/callback', monthlyLimit: 250000, student: true });
        await createKey(t.db, { accountId, appName: 'Exercise widget', kind: 'widget', allowedOrigins: ['https://course.example.edu', 'http://localhost:3000'] });
        await goto('/keys');
        await checkPage('/keys');
        expect(await page.$$eval('[aria-label="Your keys"] tr[data-key-id]', (r) => r.length)).to.equal(2);
        expect(await brokenCells('[aria-label="Your keys"] table')).to.deep.equal([]);
        await goto('/');
        await checkPage('/');
        expect(await brokenCells('[aria-label="Keys this month"] table')).to.deep.equal([]);
        expect(await brokenCells('[aria-label="Plan limits"] table')).to.deep.equal([]);
        // And the problems list, with the problem made above.
        await goto('/problems');
        expect(await page.$$eval('[aria-label="Problems"] tbody tr', (r) => r.length)).to.be.at.least(1);
        expect(await brokenCells('[aria-label="Problems"] table')).to.deep.equal([]);
      });
    });
  }
});
