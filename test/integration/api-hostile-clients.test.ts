import { once } from 'node:events';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { REQUEST_LIMITS } from '../../src/limits.js';
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
});
