import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { startApi } from '../../src/api/server.js';
import { loadConfig } from '../../src/config.js';
import { REQUEST_LIMITS } from '../../src/limits.js';
import { systemClock } from '../../src/util/clock.js';
import { testConfig } from '../helpers/api.js';
import { keyFor, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { closeCode, parseHttpAnswer, rawExchange, rawWebSocket, wsFrame } from '../helpers/raw-socket.js';

// What an attacker sends over raw TCP: malformed WebSocket frames must close only
// their own connection, with the right close code, and the service keeps answering;
// requests Node's HTTP parser refuses are answered in the API's JSON error shape.

describe('hostile clients', function () {
  let s: ResultsStack;
  let key: string;
  before(async () => {
    s = await resultsStack('hostile_clients', { RUNBOX_REQUEST_TIMEOUT_MS: '1500' });
    key = (await keyFor(s.db)).key.key;
  });
  after(async () => s?.close());

  /** The server still serves HTTP and a fresh, well-formed WebSocket. */
  async function stillServing(): Promise<void> {
    const res = await fetch(`${s.url}/api/limits/`);
    expect(res.status).to.equal(200);
    const ws = new WebSocket(`ws://127.0.0.1:${s.api.port}/api/v2/ws/`, { headers: { Authorization: key } });
    await once(ws, 'open');
    ws.send('not json');
    const [data] = (await once(ws, 'message')) as [Buffer];
    expect(JSON.parse(data.toString())).to.include({ type: 'error', code: 'bad_request' });
    ws.close();
  }

  const frames: [string, () => Buffer, number][] = [
    ['an unmasked frame', () => wsFrame({ payload: Buffer.from('{"type":"run"}'), masked: false }), 1002],
    ['a text frame that is not UTF-8', () => wsFrame({ payload: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }), 1007],
    ['a frame with RSV1 set (no extension negotiated)', () => wsFrame({ payload: Buffer.from('{}'), rsv1: true }), 1002],
    ['a frame over the size limit', () => wsFrame({ declaredLength: REQUEST_LIMITS.bodyMaxBytes + 1 }), 1009],
  ];
  for (const [what, frame, code] of frames) {
    it(`${what}: closes that connection with ${code}, the service keeps answering`, async () => {
      const { socket, closed } = await rawWebSocket(s.api.port, `/api/v2/ws/?key=${encodeURIComponent(key)}`);
      socket.write(frame());
      const received = await closed;
      expect(closeCode(received)).to.equal(code);
      await stillServing();
    });
  }

  it('the same frames again and again, on many connections at once', async () => {
    const all = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        const { socket, closed } = await rawWebSocket(s.api.port, `/api/v2/ws/?key=${encodeURIComponent(key)}`);
        socket.write(frames[i % frames.length]![1]());
        return closeCode(await closed);
      }),
    );
    expect(all).to.deep.equal(Array.from({ length: 12 }, (_, i) => frames[i % frames.length]![2]));
    await stillServing();
  });

  it('a connection reset during the upgrade does not take the process down', async () => {
    const { connect } = await import('node:net');
    for (let i = 0; i < 5; i++) {
      const socket = connect(s.api.port, '127.0.0.1');
      socket.on('error', () => {});
      await once(socket, 'connect');
      socket.write(`GET /api/v2/ws/?key=${encodeURIComponent(key)} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${Buffer.alloc(16, i).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      socket.resetAndDestroy();
    }
    await stillServing();
  });

  const expectJsonError = (raw: Buffer, status: number, code: string) => {
    const answer = parseHttpAnswer(raw);
    expect(answer.status, raw.toString()).to.equal(status);
    expect(answer.headers['content-type']).to.match(/^application\/json/);
    const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
    expect(body.error.code).to.equal(code);
    expect(body.error.message).to.be.a('string').and.not.equal('');
  };

  it('a bare LF in a header: 400 with a JSON body', async () => {
    const raw = await rawExchange(s.api.port, 'GET /api/limits/ HTTP/1.1\r\nHost: x\nX-Other: y\r\n\r\n');
    expectJsonError(raw, 400, 'bad_request');
    await stillServing();
  });

  it('headers or a URL over the size limit: 431 with a JSON body', async () => {
    const bigHeader = await rawExchange(s.api.port, `GET /api/limits/ HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectJsonError(bigHeader, 431, 'headers_too_large');
    const bigUrl = await rawExchange(s.api.port, `GET /api/limits/?${'q'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectJsonError(bigUrl, 431, 'headers_too_large');
  });

  it('both Content-Length and Transfer-Encoding: 400 with a JSON body', async () => {
    const raw = await rawExchange(
      s.api.port,
      `POST /api/v2/run-code/ HTTP/1.1\r\nHost: x\r\nAuthorization: ${key}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`,
    );
    expectJsonError(raw, 400, 'bad_request');
  });

  it('a chunked body that never ends: 408 with a JSON body once RUNBOX_REQUEST_TIMEOUT_MS has passed', async () => {
    const raw = await rawExchange(
      s.api.port,
      `POST /api/v2/run-code/ HTTP/1.1\r\nHost: x\r\nAuthorization: ${key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"cod`,
      { keepWriting: true },
    );
    expectJsonError(raw, 408, 'request_timeout');
    await stillServing();
  });

  it('headers that never end: 408 with a JSON body', async () => {
    const raw = await rawExchange(s.api.port, 'GET /api/limits/ HTTP/1.1\r\nHost: x\r\nX-Slow: ', { keepWriting: true });
    expectJsonError(raw, 408, 'request_timeout');
  });

  describe('keep-alive', () => {
    /** One TCP connection: sends a request, resolves with the answer's status line; records when the server closes it. */
    class KeptConnection {
      closed = false;
      private buffered = '';
      private waiter: (() => void) | undefined;
      private readonly socket: Socket;
      constructor(port: number) {
        this.socket = connect(port, '127.0.0.1');
        this.socket.on('data', (c: Buffer) => {
          this.buffered += c.toString('utf8');
          this.waiter?.();
        });
        this.socket.on('error', () => {});
        this.socket.on('close', () => {
          this.closed = true;
          this.waiter?.();
        });
      }
      async get(path: string): Promise<string> {
        this.buffered = '';
        this.socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`);
        // /api/limits/ answers a small JSON object: its closing brace ends the answer.
        while (!/\r\n\r\n[\s\S]*}$/.test(this.buffered) && !this.closed) await new Promise<void>((r) => (this.waiter = r));
        return this.buffered.split('\r\n')[0] ?? '';
      }
      end(): void {
        this.socket.destroy();
      }
    }

    it('the default keeps an idle connection 65 s, beyond a load balancer\'s 60: still open after 6 s idle, past the request timeout', async function () {
      this.timeout(20_000);
      expect(loadConfig({}).RUNBOX_KEEP_ALIVE_TIMEOUT_MS).to.equal(65_000);
      const c = new KeptConnection(s.api.port);
      try {
        expect(await c.get('/api/limits/')).to.equal('HTTP/1.1 200 OK');
        // Idle for four times RUNBOX_REQUEST_TIMEOUT_MS (1.5 s here), which bounds a request, not the idle time between two.
        await new Promise((r) => setTimeout(r, 6000));
        expect(c.closed).to.equal(false);
        expect(await c.get('/api/limits/')).to.equal('HTTP/1.1 200 OK');
        expect(c.closed).to.equal(false);
      } finally {
        c.end();
      }
    });

    it('RUNBOX_KEEP_ALIVE_TIMEOUT_MS sets it: 1 s closes an idle connection', async function () {
      this.timeout(20_000);
      const config = testConfig(s.db.url, loadConfig().RUNBOX_IMAGES_DIR, { ...s.env, RUNBOX_KEEP_ALIVE_TIMEOUT_MS: '1000' });
      const short = await startApi({ db: s.db.db, config, clock: systemClock, maintenanceCacheMs: 0, log: { error: () => {} } });
      const c = new KeptConnection(short.port);
      try {
        expect(await c.get('/api/limits/')).to.equal('HTTP/1.1 200 OK');
        await new Promise((r) => setTimeout(r, 4000));
        expect(c.closed).to.equal(true);
      } finally {
        c.end();
        await short.close();
      }
    });
  });
});
