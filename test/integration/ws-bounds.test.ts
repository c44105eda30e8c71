import { once } from 'node:events';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { startApi } from '../../src/api/server.js';
import { loadConfig } from '../../src/config.js';
import { systemClock } from '../../src/util/clock.js';
import { testConfig } from '../helpers/api.js';
import { rawWebSocket, wsFrame } from '../helpers/raw-socket.js';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';

// What one client may hold of the API through WebSocket connections, with real
// sockets: connections per key and per client address are capped (429 over the cap),
// a peer that stops answering pings is dropped, an idle connection is closed, a client
// that does not read its output is cut off; and an ordinary API key does not work
// from a page on another site.

const PER_KEY = 3;
const PER_ADDRESS = 5;
const PING_MS = 200;
const IDLE_MS = 1500;
const MAX_UNREAD = 64 * 1024;
const PUBLIC_URL = 'https://runbox.example';

type Opened = { ws: WebSocket } | { status: number; body: { error: { code: string; message: string } } };

/** Opens a WebSocket, or returns the HTTP answer that refused the upgrade. */
function tryOpen(url: string, opts: { headers?: Record<string, string>; origin?: string } = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts);
    ws.once('open', () => resolve({ ws }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as { error: { code: string; message: string } } }));
    });
    ws.once('error', reject);
  });
}

async function opened(url: string, opts: { headers?: Record<string, string>; origin?: string } = {}): Promise<WebSocket> {
  const r = await tryOpen(url, opts);
  if (!('ws' in r)) throw new Error(`refused: ${r.status} ${JSON.stringify(r.body)}`);
  return r.ws;
}

/** A refusal told on an accepted socket: its one message, and the close code that follows. */
async function refusalOnSocket(url: string, opts: { headers?: Record<string, string>; origin?: string } = {}): Promise<{ message: Record<string, unknown>; code: number }> {
  const ws = new WebSocket(url, opts);
  // Listening before the socket opens: the message may come in the handshake's packet.
  const message = once(ws, 'message') as Promise<[Buffer]>;
  const closed = once(ws, 'close') as Promise<[number, Buffer]>;
  await once(ws, 'open');
  ws.send(JSON.stringify({ type: 'run', id: 'late', code: 'print(1)', compiler: 'python-3.9.7' }));
  const [m] = await message;
  const [code] = await closed;
  return { message: JSON.parse(m.toString()) as Record<string, unknown>, code };
}

async function closeAll(list: WebSocket[]): Promise<void> {
  await Promise.all(
    list.map(async (ws) => {
      if (ws.readyState === ws.CLOSED) return;
      const closed = once(ws, 'close');
      ws.close();
      await closed;
    }),
  );
  // The server releases a place when its side of the socket has closed.
  await new Promise((r) => setTimeout(r, 100));
}

/** Opcodes of the frames in what the server wrote. */
function opcodes(received: Buffer): number[] {
  const out: number[] = [];
  let at = 0;
  while (at + 2 <= received.length) {
    let len = received[at + 1]! & 0x7f;
    let start = at + 2;
    if (len === 126) {
      if (at + 4 > received.length) break;
      len = received.readUInt16BE(at + 2);
      start += 2;
    } else if (len === 127) {
      if (at + 10 > received.length) break;
      len = Number(received.readBigUInt64BE(at + 2));
      start += 8;
    }
    if (start + len > received.length) break;
    out.push(received[at]! & 0x0f);
    at = start + len;
  }
  return out;
}

describe('WebSocket connection bounds', function () {
  let s: ResultsStack;
  let wsUrl: string;
  const auth = (key: string) => ({ headers: { Authorization: key } });
  before(async () => {
    s = await resultsStack('ws_bounds', {
      RUNBOX_WS_MAX_PER_KEY: String(PER_KEY),
      RUNBOX_WS_MAX_PER_ADDRESS: String(PER_ADDRESS),
      RUNBOX_WS_PING_MS: String(PING_MS),
      RUNBOX_WS_IDLE_MS: String(IDLE_MS),
      RUNBOX_WS_MAX_UNREAD_BYTES: String(MAX_UNREAD),
      RUNBOX_PUBLIC_URL: PUBLIC_URL,
    });
    wsUrl = `ws://127.0.0.1:${s.api.port}/api/v2/ws/`;
  });
  after(async () => s?.close());

  it('a key holds at most RUNBOX_WS_MAX_PER_KEY connections: one more is answered 429 with a JSON error; closing one frees a place', async () => {
    const { key } = await keyFor(s.db);
    const open = await Promise.all(Array.from({ length: PER_KEY }, () => opened(wsUrl, auth(key.key))));
    const over = await tryOpen(wsUrl, auth(key.key));
    expect(over).to.not.have.property('ws');
    expect(over).to.deep.include({ status: 429 });
    const body = (over as { body: { error: { code: string; message: string } } }).body;
    expect(body.error.code).to.equal('too_many_connections');
    expect(body.error.message).to.match(new RegExp(`at most ${PER_KEY} WebSocket connections .* per key`));
    await closeAll(open.slice(0, 1));
    const again = await opened(wsUrl, auth(key.key));
    await closeAll([again, ...open.slice(1)]);
  });

  it('a client address holds at most RUNBOX_WS_MAX_PER_ADDRESS connections, whatever the keys', async () => {
    const keys = await Promise.all([keyFor(s.db), keyFor(s.db), keyFor(s.db)]);
    const open: WebSocket[] = [];
    for (let i = 0; i < PER_ADDRESS; i++) open.push(await opened(wsUrl, auth(keys[i % 2]!.key.key)));
    const over = await tryOpen(wsUrl, auth(keys[2]!.key.key));
    expect(over).to.deep.include({ status: 429 });
    expect((over as { body: { error: { message: string } } }).body.error.message).to.match(/per client address/);
    await closeAll(open);
    await closeAll([await opened(wsUrl, auth(keys[2]!.key.key))]);
  });

  it('a connection that does not answer pings is dropped; one that answers stays open', async () => {
    const { key } = await keyFor(s.db);
    const answering = await opened(wsUrl, auth(key.key));
    const silent = await rawWebSocket(s.api.port, `/api/v2/ws/?key=${encodeURIComponent(key.key)}`);
    const received = await silent.closed;
    expect(opcodes(received)).to.include(0x9); // pinged before being dropped
    expect(answering.readyState).to.equal(WebSocket.OPEN);
    await closeAll([answering]);
  });

  it('a connection idle for RUNBOX_WS_IDLE_MS is closed normally (1000)', async () => {
    const { key } = await keyFor(s.db);
    const ws = await opened(wsUrl, auth(key.key));
    const [code] = (await once(ws, 'close')) as [number];
    expect(code).to.equal(1000);
  });

  it('a connection with a run going is not idle: the result arrives, then it is closed', async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      PENDING: ${why}`);
      this.skip();
    }
    if (!s.runner) await s.startRunner();
    const { key } = await keyFor(s.db);
    const ws = await opened(wsUrl, auth(key.key));
    const messages: { type: string }[] = [];
    ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString()) as { type: string }));
    ws.send(JSON.stringify({ type: 'run', id: 'long', compiler: 'python-3.9.7', code: `import time\ntime.sleep(${(IDLE_MS * 2) / 1000})\nprint("slept")\n` }));
    const [code] = (await once(ws, 'close')) as [number];
    expect(code).to.equal(1000);
    const result = messages.find((m) => m.type === 'result');
    expect(result, JSON.stringify(messages)).to.include({ status: 'success', output: 'slept\n' });
  });

  it('a client that does not read its output is cut off past RUNBOX_WS_MAX_UNREAD_BYTES; the service keeps serving', async () => {
    // An API of its own whose pings and idle timeout are far off: only the unread
    // output can end this connection.
    const config = testConfig(s.db.url, loadConfig().RUNBOX_IMAGES_DIR, { RUNBOX_WS_MAX_UNREAD_BYTES: String(MAX_UNREAD) });
    const api = await startApi({ db: s.db.db, config, clock: systemClock, maintenanceCacheMs: 0, log: { error: () => {} } });
    try {
      const { key } = await keyFor(s.db);
      const { socket, closed } = await rawWebSocket(api.port, `/api/v2/ws/?key=${encodeURIComponent(key.key)}`);
      socket.pause(); // reads nothing: the kernel's buffers fill, then the server's
      // Bad messages are answered one for one (an error naming the 200-character id).
      const frame = wsFrame({ payload: Buffer.from(JSON.stringify({ type: 'nope', id: 'x'.repeat(200) })) });
      const count = 60_000;
      for (let sent = 0; sent < count && !socket.destroyed; sent += 1000) {
        if (!socket.write(Buffer.concat(Array.from({ length: 1000 }, () => frame)))) await Promise.race([once(socket, 'drain').catch(() => {}), closed]);
      }
      socket.resume();
      // Cut off by the server (a reset: the replies still unread are gone with it);
      // without the bound it would hold every reply and stay open.
      const cut = await Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20_000))]);
      expect(cut, 'the server closed the connection').to.equal(true);
      const ws = await opened(`ws://127.0.0.1:${api.port}/api/v2/ws/`, auth(key.key));
      const next = once(ws, 'message') as Promise<[Buffer]>;
      ws.send('not json');
      expect(JSON.parse((await next)[0].toString())).to.include({ code: 'bad_request' });
      await closeAll([ws]);
    } finally {
      await api.close();
    }
  });

  describe('an ordinary API key in a browser', () => {
    it('from a page on another site: told on the socket (a page can read it there) to use a widget key, then closed (1008); no run', async () => {
      const { accountId, key } = await keyFor(s.db);
      for (const [url, opts] of [
        [wsUrl, { ...auth(key.key), origin: 'https://elsewhere.example' }],
        // ?key= as a page would pass it: the same.
        [`${wsUrl}?key=${encodeURIComponent(key.key)}`, { origin: 'http://127.0.0.1:1' }],
      ] as const) {
        const refusal = await refusalOnSocket(url, opts);
        expect(refusal.message).to.include({ type: 'error', id: null, code: 'origin_not_allowed' });
        expect(refusal.message['message']).to.include(opts.origin).and.to.match(/use a widget key/);
        expect(refusal.code).to.equal(1008);
      }
      const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
      expect(rows).to.have.length(0);
    });

    it('a wrong or revoked key from a page is told on the socket too (invalid_key, 1008); without an Origin it stays 401', async () => {
      const wrong = await refusalOnSocket(`${wsUrl}?key=rbx_wrong`, { origin: 'https://blog.example' });
      expect(wrong.message).to.include({ type: 'error', id: null, code: 'invalid_key' });
      expect(wrong.code).to.equal(1008);
      const missing = await refusalOnSocket(wsUrl, { origin: 'https://blog.example' });
      expect(missing.message).to.include({ code: 'missing_key' });
      // The REST API's words.
      expect(await tryOpen(`${wsUrl}?key=rbx_wrong`)).to.deep.include({ status: 401, body: { error: { code: 'invalid_key', message: 'the API key is wrong' } } });
      expect(await tryOpen(wsUrl)).to.deep.include({ status: 401, body: { error: { code: 'missing_key', message: 'the Authorization header (or ?key=) with an API key is required' } } });
    });

    it("from the service's own pages (RUNBOX_PUBLIC_URL, or the address it was reached at) and without an Origin: works as before", async () => {
      const { key } = await keyFor(s.db);
      const list = [
        await opened(wsUrl, auth(key.key)),
        await opened(wsUrl, { ...auth(key.key), origin: PUBLIC_URL }),
        await opened(wsUrl, { ...auth(key.key), origin: `http://127.0.0.1:${s.api.port}` }),
      ];
      await closeAll(list);
    });

    it('a widget key is not concerned: its own allowed origins decide', async () => {
      const { key } = await keyFor(s.db, { kind: 'widget', allowedOrigins: ['https://blog.example'] });
      const ws = await opened(wsUrl, { ...auth(key.key), origin: 'https://blog.example' });
      const next = once(ws, 'message') as Promise<[Buffer]>;
      ws.send('not json');
      expect(JSON.parse((await next)[0].toString())).to.include({ code: 'bad_request' });
      await closeAll([ws]);
    });
  });
});
