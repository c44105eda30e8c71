import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import type { BrowserContext, Page } from 'puppeteer-core';
import { startSender, type Sender } from '../../src/callbacks/sender.js';
import { loadConfig } from '../../src/config.js';
import { SMTPServer } from 'smtp-server';
import { systemClock } from '../../src/util/clock.js';
import { postRun, startTestApi, testConfig } from '../helpers/api.js';
import { browserUnavailable, byLabel, byText, clickAndWait, fill, launchBrowser, pressWithControl, seriousAxeViolations, tabTo, type TestBrowser } from '../helpers/browser.js';
import { realRunsUnavailable, resultsStack, silentLog, type ResultsStack } from '../helpers/results-stack.js';

// The web portal in a real headless Chromium against the real API, runner and
// callback sender: sign-up and log-in, "+ Create New" with the keyboard, the key shown
// once, runs with it, the dashboard against GET /api/usage/, per-key limits, revoking,
// submissions and Redeliver, the playground, and what another account may see.

interface Hook {
  headers: IncomingMessage['headers'];
  body: string;
}

async function until<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('web portal in a browser', function () {
  this.timeout(180_000);
  let stack: ResultsStack;
  let sender: Sender;
  let tb: TestBrowser;
  let page: Page;
  let receiver: Server;
  let hookUrl: string;
  const hooks: Hook[] = [];
  const dialogs: string[] = [];
  const email = `portal-${process.pid}@example.com`;
  const password = 'correct horse battery';
  let key1 = '';
  let key1Id = '';
  let key2 = '';
  let firstSubmission = '';

  const axeClean = async (where: string, p: Page = page) => {
    const v = await seriousAxeViolations(p);
    expect(v, `axe on ${where}: ${JSON.stringify(v)}`).to.deep.equal([]);
  };
  const text = (p: Page = page) => p.$eval('main', (m) => (m as HTMLElement).innerText);
  const goto = async (path: string, p: Page = page) => (await p.goto(stack.url + path, { waitUntil: 'load' }))!;
  const finished = (key: string, id: string) =>
    until(`submission ${id}`, async () => {
      const s = (await (await fetch(`${stack.url}/api/v2/submissions/${id}`, { headers: { Authorization: key } })).json()) as { state: string };
      return s.state === 'finished' || s.state === 'failed' ? s : undefined;
    });
  const run = async (key: string) => {
    const res = await postRun(stack.url, key, { code: 'print(input()[::-1])', input: 'portal', compiler: 'python-3.9.7' });
    return { status: res.status, id: res.headers.get('X-Submission-Id') ?? '', body: await res.text() };
  };

  before(async function () {
    const why = browserUnavailable() ?? realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`SKIPPED: ${why}`);
      this.skip();
    }
    const env: Record<string, string> = { RUNBOX_CALLBACK_ALLOW_PRIVATE: '1' };
    if (process.env['RUNBOX_SANDBOX_UID_BASE']) env['RUNBOX_SANDBOX_UID_BASE'] = process.env['RUNBOX_SANDBOX_UID_BASE'];
    stack = await resultsStack('portal_browser', env);
    await stack.startRunner();
    sender = await startSender({ db: stack.db.db, config: testConfig(stack.db.url, loadConfig().RUNBOX_IMAGES_DIR, stack.env), log: silentLog });
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        hooks.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    tb = await launchBrowser();
    page = await tb.browser.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  });

  after(async () => {
    await tb?.close();
    await sender?.stop();
    receiver?.close();
    await stack?.close();
  });

  it('signs up, logs out, refuses a wrong password with one message, and logs in', async () => {
    const res = await goto('/signup');
    expect(res.headers()['content-security-policy']).to.include("script-src 'self'");
    await axeClean('/signup');
    await fill(page, 'Email', email);
    await fill(page, 'Password', password);
    await clickAndWait(page, await byText(page, 'Sign up', 'button'));
    expect(new URL(page.url()).pathname).to.equal('/');
    expect(await page.$eval('h1', (h) => h.textContent)).to.equal('Dashboard');
    await axeClean('/ (dashboard)');

    await clickAndWait(page, await byText(page, 'Log out', 'button'));
    expect(new URL(page.url()).pathname).to.equal('/login');
    expect(await text()).to.include('You are logged out.');
    await axeClean('/login');
    // The session is gone: the dashboard sends the visitor back to log in.
    await goto('/');
    expect(new URL(page.url()).pathname).to.equal('/login');

    await fill(page, 'Email', email);
    await fill(page, 'Password', 'not the password');
    await clickAndWait(page, await byText(page, 'Log in', 'button'));
    expect(await text()).to.include('Wrong email or password.');
    await fill(page, 'Email', `nobody-${process.pid}@example.com`);
    await fill(page, 'Password', 'not the password');
    await clickAndWait(page, await byText(page, 'Log in', 'button'));
    expect(await text()).to.include('Wrong email or password.');

    await fill(page, 'Email', email);
    await fill(page, 'Password', password);
    await clickAndWait(page, await byText(page, 'Log in', 'button'));
    expect(new URL(page.url()).pathname).to.equal('/');
  });

  it('creates a key with the keyboard alone, shows it once, and the key runs over REST', async () => {
    await goto('/keys');
    expect(await page.$eval('h1', (h) => h.textContent)).to.equal('API keys');
    await axeClean('/keys');
    await tabTo(page, '+ Create New', (e) => e.text === '+ Create New');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(new URL(page.url()).pathname).to.equal('/keys/new');
    await axeClean('/keys/new');
    await tabTo(page, 'App Name', (e) => e.label === 'App Name');
    await page.keyboard.type('first app');
    await page.keyboard.press('Tab');
    await page.keyboard.type(hookUrl);
    await tabTo(page, 'Create', (e) => e.tag === 'BUTTON' && e.text === 'Create');
    await Promise.all([page.waitForNavigation(), page.keyboard.press('Enter')]);
    expect(await page.$eval('h1', (h) => h.textContent)).to.equal('Key created');
    expect(await text()).to.include('will not be shown again');
    await axeClean('key created');
    key1 = await (await byLabel(page, 'API key')).evaluate((e) => (e as HTMLInputElement).value);
    const secret = await (await byLabel(page, 'Signing secret')).evaluate((e) => (e as HTMLInputElement).value);
    expect(key1).to.match(/^rbx_/);
    expect(secret).to.match(/^rbxs_/);
    expect(await page.$$('button[data-copy]')).to.have.length(2);

    // Never again: not in the list, not on the key's page.
    await goto('/keys');
    const html = await page.content();
    expect(html).not.to.include(key1);
    expect(html).not.to.include(secret);
    expect(await text()).to.include(key1.slice(0, 12));
    key1Id = await page.$eval(`tr[data-key-prefix="${key1.slice(0, 12)}"]`, (tr) => tr.getAttribute('data-key-id')!);
    await goto(`/keys/${key1Id}`);
    expect(await page.content()).not.to.include(secret);
    await axeClean('/keys/:id');

    const r = await run(key1);
    expect(r.status, r.body).to.equal(200);
    firstSubmission = r.id;
    expect((await finished(key1, r.id)).state).to.equal('finished');
  });

  it("shows on the dashboard exactly the figures GET /api/usage/ answers, for the account and the key's row", async () => {
    const usage = (await (await fetch(`${stack.url}/api/usage/`, { headers: { Authorization: key1 } })).json()) as Record<string, unknown> & {
      current: Record<string, number>;
      key: Record<string, number | null>;
    };
    await goto('/');
    const account = await page.evaluate(() =>
      Object.fromEntries(
        [...document.querySelectorAll('[data-field]')]
          .filter((e) => !e.closest('[data-key-prefix]'))
          // A moment and a count are shown in the portal's one form each; <time datetime> and <data value> hold the values.
          .map((e) => [e.getAttribute('data-field')!, e.querySelector('time')?.getAttribute('datetime') ?? e.querySelector('data')?.getAttribute('value') ?? (e.textContent ?? '').trim()]),
      ),
    );
    for (const f of ['month', 'submissions', 'monthly_limit', 'remaining', 'resets_at', 'submissions_per_minute', 'pending_submissions', 'running_submissions']) {
      expect(account[f], f).to.equal(String(usage[f]));
    }
    for (const f of ['submissions_last_minute', 'pending', 'running']) expect(account[`current.${f}`], f).to.equal(String(usage.current[f]));
    // Beside the plan's runs at once, the live runners' slots that bound it (as /api/health counts them).
    const health = (await (await fetch(`${stack.url}/api/health`)).json()) as { runners: { slots: number } };
    expect(account['runner_slots'], 'runner_slots').to.equal(String(health.runners.slots));
    expect(usage['submissions']).to.equal(1);
    const row = await page.$eval(`tr[data-key-prefix="${key1.slice(0, 12)}"]`, (tr) =>
      Object.fromEntries([...tr.querySelectorAll('[data-field]')].map((e) => [e.getAttribute('data-field')!, (e.textContent ?? '').trim()])),
    );
    const asNull = (s: string | undefined) => (s === 'none' || s === '—' ? null : Number(s?.replace(/,/g, '')));
    expect({ submissions: asNull(row['submissions']), monthly_limit: asNull(row['monthly_limit']), remaining: asNull(row['remaining']) }).to.deep.equal(usage.key);
    expect(await page.$$('svg.chart rect.bar')).to.have.length.greaterThan(27);
  });

  it("stops a key at the limit set on its page while another key keeps running", async () => {
    await goto('/keys/new');
    await fill(page, 'App Name', 'second app');
    await clickAndWait(page, await byText(page, 'Create', 'button'));
    key2 = await (await byLabel(page, 'API key')).evaluate((e) => (e as HTMLInputElement).value);

    await goto('/keys');
    await clickAndWait(page, await byText(page, 'first app', 'a'));
    await fill(page, 'Monthly limit', 'lots');
    await clickAndWait(page, await byText(page, 'Save', 'button'));
    expect(await text()).to.include('monthly limit must be a whole number');
    await axeClean('key page with an error');
    await fill(page, 'Monthly limit', '2');
    await clickAndWait(page, await byText(page, 'Save', 'button'));
    expect(await text()).to.include('Saved.');

    const second = await run(key1);
    expect(second.status, second.body).to.equal(200);
    const third = await postRun(stack.url, key1, { code: 'print(1)', compiler: 'python-3.9.7' });
    expect(third.status).to.equal(429);
    expect(((await third.json()) as { error: { code: string } }).error.code).to.equal('key_monthly_limit');
    const other = await run(key2);
    expect(other.status, other.body).to.equal(200);
    await finished(key1, second.id);
    await finished(key2, other.id);

    await goto('/keys');
    const row = await page.$eval(`tr[data-key-prefix="${key1.slice(0, 12)}"]`, (tr) => (tr as HTMLElement).innerText);
    expect(row).to.match(/\b2\s+2\s+0\b/); // runs this month, own limit, remaining
    await goto('/');
    expect(await text()).to.include('You have used all of the monthly limit of key "first app"');
  });

  it('revokes a key after a confirmation, and the key answers 401 at once', async () => {
    await goto('/keys');
    await clickAndWait(page, await byText(page, 'second app', 'a'));
    await clickAndWait(page, await byText(page, 'Revoke key…', 'a'));
    expect(await text()).to.include('This cannot be undone');
    await axeClean('revoke confirmation');
    await clickAndWait(page, await byText(page, 'Revoke key', 'button'));
    expect(await text()).to.include('The key is revoked');
    const res = await fetch(`${stack.url}/api/usage/`, { headers: { Authorization: key2 } });
    expect(res.status).to.equal(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('revoked_key');
  });

  it('lists submissions and redelivers a callback to the receiver', async () => {
    await until('the first callback', async () => hooks.some((h) => h.headers['x-runbox-submission'] === firstSubmission));
    await goto('/submissions');
    await axeClean('/submissions');
    expect(await page.$$('tr[data-submission-id]')).to.have.length(3);
    const link = await page.$(`tr[data-submission-id="${firstSubmission}"] a`);
    expect(link).not.to.equal(null);
    await clickAndWait(page, link!);
    expect(await text()).to.include('latrop');
    await until('delivered state', async () => {
      await goto(`/submissions/${firstSubmission}`);
      return (await page.$$eval('[data-delivery-id] [data-field="state"]', (c) => c.map((e) => e.textContent))).includes('delivered');
    });
    await axeClean('/submissions/:id');
    await clickAndWait(page, await byText(page, 'Redeliver', 'button'));
    expect(await text()).to.include('queued for delivery again');
    await axeClean('/submissions/:id after Redeliver');
    await until('the redelivery', async () => hooks.filter((h) => h.headers['x-runbox-submission'] === firstSubmission).length >= 2);
    const deliveries = hooks.filter((h) => h.headers['x-runbox-submission'] === firstSubmission);
    expect(deliveries[1]!.headers['x-runbox-delivery']).not.to.equal(deliveries[0]!.headers['x-runbox-delivery']);
    expect(JSON.parse(deliveries[1]!.body)).to.deep.include({ output: 'latrop\n' });
    await goto(`/submissions/${firstSubmission}`);
    expect(await page.$$('[data-delivery-id]')).to.have.length(2);
    // The answer to a click that finds a delivery still pending.
    await goto(`/submissions/${firstSubmission}?pending=1`);
    expect(await text()).to.include('still pending; it was not queued again');
    await axeClean('/submissions/:id?pending=1');
  });

  it('runs code in the playground over the WebSocket with the chosen key', async () => {
    // The first key is at its own limit: lift it first.
    await goto(`/keys/${key1Id}`);
    await fill(page, 'Monthly limit', '');
    await clickAndWait(page, await byText(page, 'Save', 'button'));
    await goto('/playground');
    await axeClean('/playground');
    await page.select('#pg-key', key1Id);
    await page.select('#pg-compiler', 'python-3.9.7');
    // Pasted over the sample in the file's code editor, as a person would.
    await page.waitForSelector('#playground[data-editor="ready"]', { timeout: 30_000 });
    await page.locator('::-p-aria([name="Code of main.py"][role="textbox"])').click();
    await pressWithControl(page, 'a');
    await page.evaluate(() => {
      const data = new DataTransfer();
      data.setData('text/plain', 'print(input()[::-1])');
      document.activeElement!.shadowRoot!.activeElement!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await fill(page, 'Standard input', 'browser');
    await (await byText(page, 'Run', 'button')).click();
    await page.waitForSelector('#verdict[data-status]', { timeout: 60_000 });
    expect(await page.$eval('#verdict', (e) => e.getAttribute('data-status'))).to.equal('success');
    expect(await page.$eval('#output', (e) => e.textContent)).to.equal('resworb\n');
  });

  it("shows a new widget key's snippet with a live preview that runs under the portal's strict CSP", async () => {
    await goto('/keys/new');
    await fill(page, 'App Name', 'blog widget');
    await (await page.$('#kind-widget'))!.click();
    await fill(page, 'Allowed origins', new URL(stack.url).origin);
    await clickAndWait(page, await byText(page, 'Create', 'button'));
    expect(await page.$eval('h1', (h) => h.textContent)).to.equal('Key created');
    const widgetKey = await (await byLabel(page, 'Widget key')).evaluate((e) => (e as HTMLInputElement).value);
    const snippet = await (await byLabel(page, 'Embed snippet')).evaluate((e) => (e as HTMLTextAreaElement).value);
    expect(snippet).to.include('/widget/v1.js').and.to.include(`key="${widgetKey}"`);
    await page.waitForFunction(() => !!document.querySelector('[data-widget-preview] runbox-widget')?.shadowRoot?.querySelector('button'));
    await axeClean('key created (widget preview)');
    await page.$eval('runbox-widget', (w) => (w.shadowRoot!.querySelector('button') as HTMLButtonElement).click());
    await page.waitForFunction(() => !!document.querySelector('runbox-widget')!.shadowRoot!.querySelector('[role="log"] .verdict'), { timeout: 60_000 });
    const log = await page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('[role="log"]')!.textContent ?? '');
    expect(log).to.include('hello');
  });

  it('shows a script in App Name as text and never runs it', async () => {
    const hostile = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
    await goto('/keys/new');
    await fill(page, 'App Name', hostile);
    await clickAndWait(page, await byText(page, 'Create', 'button'));
    expect(await text()).to.include(hostile);
    await goto('/keys');
    expect(await text()).to.include(hostile);
    await goto('/');
    expect(await text()).to.include(hostile);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).to.equal(undefined);
    expect(dialogs).to.deep.equal([]);
  });

  it('answers a sign-up the same for a new and a taken address when SMTP is configured, on an accessible page', async () => {
    const mails: string[] = [];
    const smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData(stream, _session, cb) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          mails.push(Buffer.concat(chunks).toString('utf8'));
          cb();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const smtpUrl = `smtp://127.0.0.1:${(smtp.server.address() as AddressInfo).port}`;
    const mailed = await startTestApi({ db: stack.db.db, config: testConfig(stack.db.url, loadConfig().RUNBOX_IMAGES_DIR, { ...stack.env, RUNBOX_SMTP_URL: smtpUrl }), clock: systemClock });
    const context = await tb.browser.createBrowserContext();
    try {
      const p = await context.newPage();
      const answers = [];
      for (const address of [`new-${process.pid}@example.com`, email.toUpperCase()]) {
        await p.goto(`${mailed.url}/signup`, { waitUntil: 'load' });
        await fill(p, 'Email', address);
        await fill(p, 'Password', 'some other password');
        await clickAndWait(p, await byText(p, 'Sign up', 'button'));
        expect(await p.$eval('h1', (h) => h.textContent)).to.equal('Check your email');
        await axeClean('sign-up answer', p);
        answers.push((await text(p)).replace(address, 'ADDRESS'));
      }
      expect(answers[1]).to.equal(answers[0]);
      await until('both emails', async () => mails.length >= 2);
      expect(mails.some((m) => m.includes('already has an account'))).to.equal(true);
    } finally {
      await context.close();
      await mailed.close();
      await new Promise<void>((r) => smtp.close(() => r()));
    }
  });

  describe('another account', () => {
    let ctx: BrowserContext;
    let other: Page;
    before(async () => {
      ctx = await tb.browser.createBrowserContext();
      other = await ctx.newPage();
    });
    after(() => ctx?.close());

    it("answers 404 for the first account's key and submission pages", async () => {
      await goto('/signup', other);
      await fill(other, 'Email', `other-${process.pid}@example.com`);
      await fill(other, 'Password', 'another long password');
      await clickAndWait(other, await byText(other, 'Sign up', 'button'));
      expect((await goto(`/keys/${key1Id}`, other)).status()).to.equal(404);
      expect((await goto(`/keys/${key1Id}/revoke`, other)).status()).to.equal(404);
      expect((await goto(`/submissions/${firstSubmission}`, other)).status()).to.equal(404);
      expect(await text(other)).not.to.include('first app');
      await goto('/submissions', other);
      expect(await other.$$('tr[data-submission-id]')).to.have.length(0);
    });

    it('sets the session cookie HttpOnly and SameSite=Lax, and not Secure over plain http', async () => {
      const cookie = (await other.cookies()).find((c) => c.name === 'rbx_session');
      expect(cookie).not.to.equal(undefined);
      expect(cookie!.httpOnly).to.equal(true);
      expect(cookie!.sameSite).to.equal('Lax');
      expect(cookie!.secure).to.equal(false);
      // Scripts in the page cannot read it.
      expect(await other.evaluate(() => document.cookie)).not.to.include('rbx_session');
    });

    it('changes the password and logs out everywhere', async () => {
      await goto('/account', other);
      await axeClean('/account', other);
      await fill(other, 'Current password', 'another long password');
      await fill(other, 'New password', 'a newer long password');
      await clickAndWait(other, await byText(other, 'Change password', 'button'));
      expect(await text(other)).to.include('Your password is changed');
      await clickAndWait(other, await byText(other, 'Log out everywhere', 'button'));
      expect(new URL(other.url()).pathname).to.equal('/login');
      await fill(other, 'Email', `other-${process.pid}@example.com`);
      await fill(other, 'Password', 'a newer long password');
      await clickAndWait(other, await byText(other, 'Log in', 'button'));
      expect(new URL(other.url()).pathname).to.equal('/');
    });
  });
});
