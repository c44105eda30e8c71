import { once } from 'node:events';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { createKey } from '../../src/accounts/keys.js';
import { sql } from 'kysely';
import { createLiveResults } from '../../src/api/live.js';
import { startApi } from '../../src/api/server.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/util/clock.js';
import { testConfig } from '../helpers/api.js';
import { waitForStates } from '../helpers/queue-rows.js';
import { keyFor, postJson, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { WsClient as Client } from '../helpers/ws-client.js';

// The WebSocket interface end to end: a real client, the real API, a real runner and
// sandbox; output travels runner → Postgres NOTIFY → API host → client.

const PY = 'python-3.9.7';
/** The page a widget key is allowed on. */
const SITE = 'https://a.example';
const SLOW = 'import time\nprint("first", flush=True)\ntime.sleep(0.5)\nprint("second", flush=True)\n';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sleeper = (seconds: number) => `import time\ntime.sleep(${seconds})\nprint("slept")\n`;

describe('WebSocket runs', function () {
  let s: ResultsStack;
  let wsUrl: string;
  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('ws');
    await s.startRunner();
    wsUrl = `ws://127.0.0.1:${s.api.port}/api/v2/ws/`;
  });
  after(async () => s?.close());
  // Each test starts with the runner's slots free: a run an earlier test left going
  // would otherwise turn a run here into a capacity refusal on a slow host.
  beforeEach(async () => {
    for (;;) {
      const busy = await s.db.db.selectFrom('submissions').select('id').where('state', 'in', ['queued', 'running']).execute();
      if (busy.length === 0) return;
      await pause(50);
    }
  });

  async function untilRunning(accountId: string, n: number): Promise<void> {
    for (;;) {
      const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).where('state', '=', 'running').execute();
      if (rows.length >= n) return;
      await pause(50);
    }
  }

  /** Backends of this database LISTENing (the process's one LISTEN connection, the output feed's among them). */
  async function listenerPids(): Promise<number[]> {
    const { rows } = await sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'runbox-listen'
    `.execute(s.db.db);
    return rows.map((r) => r.pid);
  }

  it('streams output as the program writes it, before the result', async () => {
    const { key } = await keyFor(s.db);
    const c = await Client.open(wsUrl, { Authorization: key.key });
    c.send({ type: 'run', id: 'r1', code: SLOW, compiler: PY });
    const result = await c.until((m) => m.type === 'result' && m.id === 'r1');
    c.close();
    const mine = c.messages.filter((m) => m.id === 'r1');
    const outputs = mine.filter((m) => m.type === 'output');
    expect(outputs.length).to.be.at.least(2);
    // "first" was flushed, then the program slept: it travels in messages of its own,
    // ahead of "second" (the program may write the newline separately).
    expect(outputs[0]).to.include({ type: 'output', id: 'r1', stream: 'stdout' });
    expect(outputs[0]!['data']).to.be.a('string').and.not.equal('');
    expect('first\n'.startsWith(outputs[0]!['data'] as string)).to.equal(true);
    expect(outputs.map((m) => m.data).join('')).to.equal('first\nsecond\n');
    expect(mine.indexOf(outputs[outputs.length - 1]!)).to.be.below(mine.indexOf(result));
    expect(mine[mine.length - 1]).to.equal(result);
    expect(result).to.include({ status: 'success', output: 'first\nsecond\n', exit_code: 0 });
    expect(result['submission_id']).to.be.a('string');
    const row = await s.db.db.selectFrom('submissions').select(['mode', 'state']).where('id', '=', result['submission_id'] as string).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ mode: 'ws', state: 'finished' });
  });

  it('streams stderr too, and only the kept 64 KB of a flood', async () => {
    const { key } = await keyFor(s.db);
    const c = await Client.open(wsUrl, { Authorization: key.key });
    const code = 'import sys\nsys.stderr.write("oops\\n")\nsys.stderr.flush()\nsys.stdout.write("x" * 200000)\n';
    c.send({ type: 'run', id: 'flood', code, compiler: PY });
    const result = await c.until((m) => m.type === 'result');
    c.close();
    const outputs = c.messages.filter((m) => m.type === 'output');
    expect(outputs.filter((m) => m.stream === 'stderr').map((m) => m.data).join('')).to.equal('oops\n');
    const streamed = outputs.filter((m) => m.stream === 'stdout').map((m) => m.data).join('');
    expect(streamed).to.equal('x'.repeat(64 * 1024));
    expect(streamed).to.equal(result['output']);
    expect(result['truncated']).to.equal(true);
  });

  it('takes the key from ?key= and refuses a connection without a valid key', async () => {
    const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [SITE] });
    const c = await Client.open(`${wsUrl}?key=${encodeURIComponent(key.key)}`, {}, SITE);
    c.send({ type: 'run', id: 'q', code: 'print(7)', compiler: PY });
    expect(await c.until((m) => m.type === 'result')).to.include({ output: '7\n' });
    c.close();
    const refused = new WebSocket(`${wsUrl}?key=wrong`);
    refused.on('error', () => {});
    const [, res] = (await once(refused, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(res.statusCode).to.equal(401);
    refused.terminate();
  });

  it('a widget key works only from its allowed origins: others are told so, nothing is counted', async () => {
    const { accountId, key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [SITE, 'https://b.example'] });
    for (const origin of ['https://evil.example', 'http://a.example', undefined]) {
      const c = await Client.open(`${wsUrl}?key=${encodeURIComponent(key.key)}`, {}, origin);
      const closed = once(c.ws, 'close') as Promise<[number, Buffer]>;
      const refusal = await c.until((m) => m.type === 'error');
      expect(refusal).to.include({ code: 'origin_not_allowed' });
      expect(refusal['message']).to.match(/not allowed/);
      if (origin) expect(refusal['message']).to.include(origin);
      const [code] = await closed;
      expect(code).to.equal(1008);
    }
    // The Origin header is compared as an origin: case and default ports do not matter.
    const ok = await Client.open(`${wsUrl}?key=${encodeURIComponent(key.key)}`, {}, 'HTTPS://B.EXAMPLE:443');
    ok.send({ type: 'run', id: 'b', code: 'print(8)', compiler: PY });
    expect(await ok.until((m) => m.type === 'result')).to.include({ output: '8\n' });
    ok.close();
    const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(rows).to.have.length(1);
  });

  it('a widget key on the REST API answers 403 saying what it is for, and counts nothing', async () => {
    const { accountId, key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: [SITE] });
    for (const path of ['/api/v2/run-code/', '/api/v2/run-code-sync/']) {
      const res = await postJson(`${s.url}${path}`, key.key, { code: 'print(1)', compiler: PY });
      expect(res.status).to.equal(403);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).to.equal('widget_key');
      expect(body.error.message).to.match(/widget key.*WebSocket/);
    }
    const usage = await fetch(`${s.url}/api/usage/`, { headers: { Authorization: key.key } });
    expect(usage.status).to.equal(403);
    const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(rows).to.have.length(0);
  });

  it('answers bad messages with bad_request and keeps the connection; one run per second', async () => {
    const { key } = await keyFor(s.db);
    const c = await Client.open(wsUrl, { Authorization: key.key });
    c.send('not json');
    expect(await c.until((m) => m.type === 'error')).to.include({ code: 'bad_request' });
    c.send({ type: 'run', id: 'b2', code: 'print(1)', compiler: 'cobol-60' });
    expect(await c.until((m) => m.type === 'error' && m.id === 'b2')).to.include({ code: 'bad_request' });
    c.send({ type: 'run', id: 'ok1', code: 'print(1)', compiler: PY });
    c.send({ type: 'run', id: 'fast', code: 'print(2)', compiler: PY });
    expect(await c.until((m) => m.id === 'fast')).to.include({ type: 'error', code: 'rate_limited' });
    expect(await c.until((m) => m.type === 'result' && m.id === 'ok1')).to.include({ output: '1\n' });
    await pause(1000);
    c.send({ type: 'run', id: 'ok2', code: 'print(2)', compiler: PY });
    expect(await c.until((m) => m.type === 'result' && m.id === 'ok2')).to.include({ output: '2\n' });
    expect(c.ws.readyState).to.equal(WebSocket.OPEN);
    c.close();
  });

  it("a run message with a field runbox does not take is refused naming it (another service's name says ours), nothing counted", async () => {
    const { accountId, key } = await keyFor(s.db);
    const c = await Client.open(wsUrl, { Authorization: key.key });
    c.send({ type: 'run', id: 'u1', code: 'print(1)', compiler: PY, stdin: '1' });
    expect(await c.until((m) => m.type === 'error' && m.id === 'u1')).to.include({
      code: 'bad_request',
      message: 'invalid run message: unknown field stdin: runbox calls it input',
    });
    c.send({ type: 'run', id: 'u2', code: 'print(1)', language: 'python' });
    expect(String((await c.until((m) => m.type === 'error' && m.id === 'u2')).message)).to.match(/^invalid run message: unknown field language: runbox calls it compiler/);
    c.send({ type: 'run', id: 'u3', code: 'print(1)', compiler: PY, timeout: 5 });
    expect(String((await c.until((m) => m.type === 'error' && m.id === 'u3')).message)).to.match(/unknown field timeout: runbox takes limits: /);
    const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(rows).to.have.length(0);
    expect(c.ws.readyState).to.equal(WebSocket.OPEN);
    c.close();
  });

  it('account limits apply; a widget key over any limit gets codeoutput in words for the reader', async () => {
    const widget = await keyFor(s.db, { kind: 'widget', monthlyLimit: 0, allowedOrigins: [SITE] });
    const w = await Client.open(wsUrl, { Authorization: widget.key.key }, SITE);
    w.send({ type: 'run', id: 'w', code: 'print(1)', compiler: PY });
    const refusal = await w.until((m) => m.id === 'w');
    expect(refusal).to.include({ type: 'error', code: 'codeoutput', reason: 'key_monthly_limit' });
    expect(refusal['message']).to.equal('This code runner has reached its monthly limit. It will work again next month.');
    w.close();
    const spent = await keyFor(s.db, { kind: 'widget', limits: { monthlyLimit: 0 }, allowedOrigins: [SITE] });
    const sw = await Client.open(wsUrl, { Authorization: spent.key.key }, SITE);
    sw.send({ type: 'run', id: 'sw', code: 'print(1)', compiler: PY });
    expect(await sw.until((m) => m.id === 'sw')).to.include({ type: 'error', code: 'codeoutput', reason: 'monthly_limit' });
    sw.close();
    const api = await keyFor(s.db, { monthlyLimit: 0 });
    const a = await Client.open(wsUrl, { Authorization: api.key.key });
    a.send({ type: 'run', id: 'a', code: 'print(1)', compiler: PY });
    expect(await a.until((m) => m.id === 'a')).to.include({ type: 'error', code: 'key_monthly_limit' });
    a.close();
    const full = await keyFor(s.db, { limits: { monthlyLimit: 0 } });
    const f = await Client.open(wsUrl, { Authorization: full.key.key });
    f.send({ type: 'run', id: 'f', code: 'print(1)', compiler: PY });
    expect(await f.until((m) => m.id === 'f')).to.include({ type: 'error', code: 'monthly_limit' });
    f.close();
    const accounts = [widget.accountId, spent.accountId, api.accountId, full.accountId];
    const none = await s.db.db.selectFrom('submissions').select('id').where('account_id', 'in', accounts).execute();
    expect(none).to.have.length(0);
  });

  it('the per-minute limit is shared by the account\'s API keys and widget keys', async () => {
    const { accountId, key } = await keyFor(s.db, { limits: { perMinute: 2 } });
    const widget = await createKey(s.db.db, { accountId, appName: 'site', kind: 'widget', allowedOrigins: [SITE] });
    expect((await postJson(`${s.url}/api/v2/run-code/`, key.key, { code: 'print(1)', compiler: PY })).status).to.equal(200);
    expect((await postJson(`${s.url}/api/v2/run-code/`, key.key, { code: 'print(1)', compiler: PY })).status).to.equal(200);
    const w = await Client.open(wsUrl, { Authorization: widget.key }, SITE);
    w.send({ type: 'run', id: 'm', code: 'print(1)', compiler: PY });
    const refusal = await w.until((m) => m.id === 'm');
    expect(refusal).to.include({ type: 'error', code: 'codeoutput', reason: 'rate_limited' });
    expect(refusal['message']).to.match(/too many runs in the last minute/);
    w.close();
  });

  it('closing the connection mid-run stops the run: cancelled, and the slot is free again', async () => {
    const { accountId, key } = await keyFor(s.db, { limits: { running: 1 } });
    const c = await Client.open(wsUrl, { Authorization: key.key });
    c.send({ type: 'run', id: 'spin', code: 'while True: pass\n', compiler: PY });
    let id: string | undefined;
    while (!id) {
      const refused = c.messages.find((m) => m.id === 'spin' && m.type === 'error');
      if (refused) throw new Error(`the run was refused: ${JSON.stringify(refused)}`);
      const row = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).where('state', '=', 'running').executeTakeFirst();
      id = row?.id;
      if (!id) await pause(50);
    }
    c.close();
    await waitForStates(s.db.db, [id], ['finished']);
    const row = await s.db.db.selectFrom('submissions').select('result').where('id', '=', id).executeTakeFirstOrThrow();
    expect((row.result as { status: string }).status).to.equal('cancelled');
    const account = await s.db.db.selectFrom('accounts').select('running_now').where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.running_now).to.equal(0);
    const again = await Client.open(wsUrl, { Authorization: key.key });
    again.send({ type: 'run', id: 'next', code: 'print("next")', compiler: PY });
    expect(await again.until((m) => m.id === 'next' && (m.type === 'result' || m.type === 'error'))).to.include({ type: 'result', status: 'success', output: 'next\n' });
    again.close();
  });

  it("a run that finds the account's slots busy is refused at once: too_many_running", async () => {
    const { accountId, key } = await keyFor(s.db, { limits: { running: 1 } });
    const first = await Client.open(wsUrl, { Authorization: key.key });
    first.send({ type: 'run', id: 'long', code: sleeper(3), compiler: PY });
    await untilRunning(accountId, 1);
    const second = await Client.open(wsUrl, { Authorization: key.key });
    second.send({ type: 'run', id: 'busy', code: 'print(1)', compiler: PY });
    const refused = await second.until((m) => m.id === 'busy');
    expect(refused).to.include({ type: 'error', code: 'too_many_running' });
    expect(refused['retry_after']).to.be.a('number');
    second.close();
    expect(await first.until((m) => m.type === 'result')).to.include({ status: 'success', output: 'slept\n' });
    first.close();
    const stored = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(stored).to.have.length(1);
  });

  it('a run that finds every runner slot busy is refused at once: capacity', async () => {
    // Two accounts fill the two slots (one account takes at most one: the other is kept for others).
    const busy = await keyFor(s.db, { limits: { running: 5 } });
    const more = await keyFor(s.db, { limits: { running: 5 } });
    for (const key of [busy, more]) {
      const res = await postJson(`${s.url}/api/v2/run-code/`, key.key.key, { code: sleeper(2), compiler: PY });
      expect(res.status).to.equal(200);
    }
    await untilRunning(busy.accountId, 1);
    await untilRunning(more.accountId, 1);
    const other = await keyFor(s.db);
    const c = await Client.open(wsUrl, { Authorization: other.key.key });
    c.send({ type: 'run', id: 'full', code: 'print(1)', compiler: PY });
    expect(await c.until((m) => m.id === 'full')).to.include({ type: 'error', code: 'capacity' });
    c.close();
    const stored = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', other.accountId).execute();
    expect(stored).to.have.length(0);
    const ids = (await s.db.db.selectFrom('submissions').select('id').where('account_id', 'in', [busy.accountId, more.accountId]).execute()).map((r) => r.id);
    await waitForStates(s.db.db, ids, ['finished']);
  });

  it('no output is lost when the API\'s listener connection drops mid-run: missed chunks are replayed in order', async () => {
    // A second API whose output listener reconnects only after 1.5 s, so chunks are
    // certainly notified while it is down.
    const live = createLiveResults({ url: s.db.url, db: s.db.db, pollMs: 200, reconnectMinMs: 1500 });
    const config = testConfig(s.db.url, loadConfig().RUNBOX_IMAGES_DIR, s.env);
    const api = await startApi({ db: s.db.db, config, clock: systemClock, maintenanceCacheMs: 0, live, log: { error: () => {} } });
    try {
      await live.outputs.ready();
      const { key } = await keyFor(s.db);
      const c = await Client.open(`ws://127.0.0.1:${api.port}/api/v2/ws/`, { Authorization: key.key });
      const code = 'import time\nprint("first", flush=True)\ntime.sleep(0.5)\nfor i in range(30):\n    print(i, flush=True)\n    time.sleep(0.1)\n';
      c.send({ type: 'run', id: 'drop', code, compiler: PY });
      await c.until((m) => m.type === 'output');
      const before = await listenerPids();
      expect(before).to.have.length.of.at.least(1);
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY(${before}::int[])`.execute(s.db.db);
      const result = await c.until((m) => m.type === 'result');
      c.close();
      const expected = 'first\n' + Array.from({ length: 30 }, (_, i) => `${i}\n`).join('');
      expect(result).to.include({ status: 'success', output: expected });
      const outputs = c.messages.filter((m) => m.type === 'output');
      expect(outputs.map((m) => m['seq'])).to.deep.equal(outputs.map((_, i) => i));
      expect(outputs.map((m) => m['data']).join('')).to.equal(expected);
      expect(c.messages.indexOf(result)).to.equal(c.messages.length - 1);
      // The listener came back on a new connection.
      const after = await listenerPids();
      expect(after.filter((p) => !before.includes(p))).to.have.length.of.at.least(1);
    } finally {
      await api.close();
      await live.close();
    }
  });

  it('a plain GET of the WebSocket path answers 426', async () => {
    const res = await fetch(`${s.url}/api/v2/ws/`);
    expect(res.status).to.equal(426);
  });
});
