import { expect } from 'chai';
import type { Page } from 'puppeteer-core';
import { browserUnavailable, hostSite, launchBrowser, type HostSite, type TestBrowser } from '../helpers/browser.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// A class at once on a one-account setup: five students' widgets on a course page, one
// widget key of the course's account, Run pressed in all five at the same moment, in
// real Chromium at desktop and at phone width, through the real API, runner and
// sandbox. The runner has a slot per student; the account's plan allows five at once.
// Each runner keeps a slot as other accounts' share (RUNBOX_RUNNER_RESERVED_SLOTS=1),
// lent to the course while no other account's run waits: all five run, none refused.

const PY = 'python-3.9.7';
const STUDENTS = 5;

function coursePage(apiUrl: string, key: string, student: number): string {
  // Each student's program is still running when the others start (a loaded host starts
  // five sandboxes over a second or more): the five overlap.
  const code = `import time\ntime.sleep(4)\nprint("student ${student} done")`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Exercise 1</title>
<script type="module" src="${apiUrl}/widget/v1.js"></script></head>
<body><main><h1>Exercise 1</h1>
<runbox-widget key="${key}" compiler="${PY}">${code}</runbox-widget></main></body></html>`;
}

const logOf = (page: Page) => page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('[role="log"]')!.textContent ?? '');

describe('a class of five judged at once on a one-account setup, in Chromium', function () {
  this.timeout(300_000);
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
    s = await resultsStack('class_at_once', { RUNBOX_RUNNER_SLOTS: String(STUDENTS), RUNBOX_RUNNER_RESERVED_SLOTS: '1', ...(uidBase ? { RUNBOX_SANDBOX_UID_BASE: uidBase } : {}) });
    await s.startRunner();
    site = await hostSite();
    chromium = await launchBrowser();
  });
  after(async () => {
    await chromium?.close();
    await site?.close();
    await s?.close();
  });

  for (const [label, viewport] of [
    ['desktop', { width: 1280, height: 800 }],
    ['phone', { width: 390, height: 844, isMobile: true, hasTouch: true }],
  ] as const) {
    it(`${label} width: five students press Run at the same moment; all five run at once and complete, none refused`, async () => {
      const { accountId, key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin], limits: { running: STUDENTS } });
      const pages: Page[] = [];
      try {
        for (let i = 1; i <= STUDENTS; i++) {
          const page = await chromium.browser.newPage();
          await page.setViewport(viewport);
          await page.goto(site.page(`/course-${label}-${i}`, coursePage(s.url, key.key, i)), { waitUntil: 'load' });
          await page.waitForFunction(() => customElements.get('runbox-widget') !== undefined && !!document.querySelector('runbox-widget')?.shadowRoot);
          pages.push(page);
        }
        // Found by role and name while each page is in front; pressed together (a page in a
        // background tab is not painted, so the press is the button's own click()).
        const buttons = [];
        for (const p of pages) {
          await p.bringToFront();
          buttons.push(await p.locator('::-p-aria([name="Run"][role="button"])').setTimeout(30_000).waitHandle());
        }
        await Promise.all(buttons.map((b) => b.evaluate((el) => (el as HTMLElement).click())));
        for (const [i, page] of pages.entries()) {
          await page.waitForFunction(
            (f: string) => (document.querySelector('runbox-widget')?.shadowRoot?.querySelector('[role="log"]')?.textContent ?? '').includes(f),
            // Polled by time: a background tab runs no animation frames.
            { timeout: 90_000, polling: 200 },
            `student ${i + 1} done`,
          );
          const log = await logOf(page);
          expect(log).to.not.match(/busy|try again|too many/i);
        }
        // A widget shows the output as it streams; the run is recorded finished just after.
        const ended = () => s.db.db.selectFrom('submissions').select(['state', 'started_at', 'finished_at']).where('account_id', '=', accountId).execute();
        let rows = await ended();
        for (let tries = 0; tries < 300 && rows.some((r) => r.state !== 'finished'); tries++) {
          await new Promise((r) => setTimeout(r, 100));
          rows = await ended();
        }
        expect(rows.map((r) => r.state)).to.deep.equal(Array(STUDENTS).fill('finished'));
        // All five in a sandbox together (the slot kept for other accounts is lent while none
        // waits): the last to start started before the first to finish finished. Read from
        // the runs' own times, not by polling, which a loaded host can step past.
        const lastStart = Math.max(...rows.map((r) => r.started_at!.getTime()));
        const firstEnd = Math.min(...rows.map((r) => r.finished_at!.getTime()));
        expect(lastStart, 'the last run of the class started before the first one finished').to.be.below(firstEnd);
      } finally {
        for (const p of pages) await p.close();
      }
    });
  }
});
