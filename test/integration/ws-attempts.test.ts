import { expect } from 'chai';
import { sql } from 'kysely';
import type { Page } from 'puppeteer-core';
import { createLiveResults } from '../../src/api/live.js';
import { followOutput, type OutputChunk } from '../../src/api/ws/follow-output.js';
import { claim, complete, heartbeat, reapExpired } from '../../src/queue/index.js';
import { OUTPUT_CHANNEL } from '../../src/queue/output-channel.js';
import { publishOutput } from '../../src/queue/output-store.js';
import { browserUnavailable, hostSite, launchBrowser } from '../helpers/browser.js';
import { expireLease } from '../helpers/queue-rows.js';
import { keyFor, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { successResult } from '../helpers/run-result.js';
import { WsClient as Client, type Msg } from '../helpers/ws-client.js';

// A WebSocket run retried after a lost lease: the first runner streamed part of its
// output, then lost its claim, and another runner ran the job again from the start.
// The API, the database and the client are real; the two runners are this test,
// writing through the runners' own queue statements (claim, publishOutput, complete),
// so the order of the attempts' chunks is the test's to choose.

const PY = 'python-3.9.7';
const LEASE = 60;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What a client shows by the documented rule: a later attempt's first chunk voids what came before. */
function shown(outputs: Msg[]): string {
  let attempt = 0;
  let text = '';
  for (const m of outputs) {
    const a = m['attempt'] as number;
    if (a < attempt) continue;
    if (a > attempt) text = '';
    attempt = a;
    text += m['data'] as string;
  }
  return text;
}

describe('WebSocket runs retried after a lost lease', function () {
  let s: ResultsStack;
  let wsUrl: string;
  const runnerInfo = (id: string) => ({ id, hostname: id, slots: 1, accountSlots: 1, launcher: 'bwrap', compilers: { [PY]: '3.9.7' } });

  before(async () => {
    s = await resultsStack('ws_attempts');
    wsUrl = `ws://127.0.0.1:${s.api.port}/api/v2/ws/`;
    // Two live runners with the compiler: the API admits WebSocket runs for their slots.
    for (const id of ['r-first', 'r-second']) await heartbeat(s.db.db, runnerInfo(id), LEASE, []);
  });
  after(async () => s?.close());

  async function queuedJob(accountId: string): Promise<string> {
    for (;;) {
      const row = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).where('state', '=', 'queued').executeTakeFirst();
      if (row) return row.id;
      await pause(20);
    }
  }

  it("the client is sent the later attempt's output only once it has begun, each chunk saying its attempt", async () => {
    const { accountId, key } = await keyFor(s.db);
    const c = await Client.open(wsUrl, { Authorization: key.key });
    c.send({ type: 'run', id: 'w1', code: 'print("hi")', compiler: PY });
    const id = await queuedJob(accountId);
    const outputs = () => c.messages.filter((m) => m.type === 'output' && m.id === 'w1');

    // Attempt 1 streams a line, then its runner loses the claim.
    const [first] = await claim(s.db.db, 'r-first', 1, LEASE, { runnerId: 'r-first', accountSlots: 1 });
    expect(first).to.include({ id, attempts: 1 });
    expect(await publishOutput(s.db.db, 'r-first', 1, { i: id, n: 0, s: 'stdout', d: 'first try\n' })).to.equal(true);
    await c.until((m) => m.type === 'output' && m.data === 'first try\n');
    await expireLease(s.db.db, id);
    expect((await reapExpired(s.db.db)).requeued).to.deep.equal([id]);

    // Attempt 2 runs it again from the start.
    const [second] = await claim(s.db.db, 'r-second', 1, LEASE, { runnerId: 'r-second', accountSlots: 1 });
    expect(second).to.include({ id, attempts: 2 });
    expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 0, s: 'stdout', d: 'second ' })).to.equal(true);
    await c.until((m) => m.type === 'output' && m.data === 'second ');
    // The first runner's late chunk is refused; one of its notifications arriving late
    // (after attempt 2's began) reaches the API host but not the client.
    expect(await publishOutput(s.db.db, 'r-first', 1, { i: id, n: 1, s: 'stdout', d: 'late\n' })).to.equal(false);
    await sql`SELECT pg_notify(${OUTPUT_CHANNEL}, ${JSON.stringify({ i: id, a: 1, n: 1, s: 'stdout', d: 'late\n' })})`.execute(s.db.db);
    expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 1, s: 'stdout', d: 'try\n' })).to.equal(true);
    expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 2, end: true })).to.equal(true);
    expect(await complete(s.db.db, 'r-second', { id, attempt: 2 }, successResult(id, { output: 'second try\n' }))).to.equal(true);

    const result = await c.until((m) => m.type === 'result' && m.id === 'w1');
    c.close();
    expect(result['output']).to.equal('second try\n');
    // Every chunk says its attempt; within an attempt seq counts from 0 without gaps.
    expect(outputs().map((m) => [m['attempt'], m['seq'], m['data']])).to.deep.equal([
      [1, 0, 'first try\n'],
      [2, 0, 'second '],
      [2, 1, 'try\n'],
    ]);
    expect(outputs().every((m) => Object.keys(m).sort().join() === 'attempt,data,id,seq,stream,type')).to.equal(true);
    // Nothing of attempt 1 came after attempt 2's first chunk: the client shows attempt 2's output only.
    expect(shown(outputs())).to.equal('second try\n');
    expect(c.stdout('w1')).to.not.include('late');
  });

  it("the widget shows the later attempt's output only, from its first chunk on", async function () {
    const why = browserUnavailable();
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const site = await hostSite();
    const chromium = await launchBrowser();
    try {
      const { accountId, key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [site.origin] });
      const page: Page = await chromium.browser.newPage();
      await page.goto(
        site.page('/retried', `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Retried</title><script type="module" src="${s.url}/widget/v1.js"></script></head>
<body><main><runbox-widget key="${key.key}" compiler="${PY}" interactive="false">print("hi")</runbox-widget></main></body></html>`),
        { waitUntil: 'load' },
      );
      await page.waitForFunction(() => !!document.querySelector('runbox-widget')?.shadowRoot?.querySelector('button'));
      const shows = (text: string, not?: string) =>
        page.waitForFunction(
          (t: string, n: string | null) => {
            const log = document.querySelector('runbox-widget')!.shadowRoot!.querySelector('[role="log"]')!.textContent ?? '';
            return log.includes(t) && (n === null || !log.includes(n));
          },
          { timeout: 30_000 },
          text,
          not ?? null,
        );
      await page.locator('::-p-aria([name="Run"][role="button"])').click();
      const id = await queuedJob(accountId);
      await claim(s.db.db, 'r-first', 1, LEASE, { runnerId: 'r-first', accountSlots: 1 });
      expect(await publishOutput(s.db.db, 'r-first', 1, { i: id, n: 0, s: 'stdout', d: 'first try\n' })).to.equal(true);
      await shows('first try');
      await expireLease(s.db.db, id);
      await reapExpired(s.db.db);
      await claim(s.db.db, 'r-second', 1, LEASE, { runnerId: 'r-second', accountSlots: 1 });
      expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 0, s: 'stdout', d: 'second try\n' })).to.equal(true);
      await shows('second try', 'first try');
      expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 1, end: true })).to.equal(true);
      expect(await complete(s.db.db, 'r-second', { id, attempt: 2 }, successResult(id, { output: 'second try\n' }))).to.equal(true);
      await shows('Finished', 'first try');
      const text = await page.$eval('runbox-widget', (w) => w.shadowRoot!.querySelector('[role="log"]')!.textContent ?? '');
      expect(text).to.match(/^second try\nFinished/);
    } finally {
      await chromium.close();
      await site.close();
    }
  });

  it('an API host that reads both attempts from the store (no LISTEN) forwards the later one only', async () => {
    const { key, accountId: owner } = await keyFor(s.db);
    const ws = await Client.open(wsUrl, { Authorization: key.key });
    ws.send({ type: 'run', id: 'w2', code: 'print("hi")', compiler: PY });
    const id = await queuedJob(owner);
    await claim(s.db.db, 'r-first', 1, LEASE, { runnerId: 'r-first', accountSlots: 1 });
    expect(await publishOutput(s.db.db, 'r-first', 1, { i: id, n: 0, s: 'stdout', d: 'first try\n' })).to.equal(true);
    expect(await publishOutput(s.db.db, 'r-first', 1, { i: id, n: 1, s: 'stdout', d: 'more of it\n' })).to.equal(true);
    await expireLease(s.db.db, id);
    await reapExpired(s.db.db);
    await claim(s.db.db, 'r-second', 1, LEASE, { runnerId: 'r-second', accountSlots: 1 });
    expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 0, s: 'stdout', d: 'second try\n' })).to.equal(true);
    expect(await publishOutput(s.db.db, 'r-second', 2, { i: id, n: 1, end: true })).to.equal(true);

    // A second API host without LISTEN subscribes now: its poll finds both attempts stored.
    const live = createLiveResults({ url: null, db: s.db.db, pollMs: 200 });
    const got: OutputChunk[] = [];
    const followed = followOutput(live, id, (chunk) => got.push(chunk));
    try {
      while (got.length === 0) await pause(50);
      await followed.drain();
      expect(got).to.deep.equal([{ attempt: 2, seq: 0, stream: 'stdout', data: 'second try\n' }]);
    } finally {
      followed.stop();
      await live.close();
    }
    expect(await complete(s.db.db, 'r-second', { id, attempt: 2 }, successResult(id, { output: 'second try\n' }))).to.equal(true);
    await ws.until((m) => m.type === 'result' && m.id === 'w2');
    ws.close();
  });
});
