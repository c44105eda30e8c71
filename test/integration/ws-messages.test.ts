import { once } from 'node:events';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { revokeKey } from '../../src/accounts/keys.js';
import { accountWithKey, fakeImagesDir, type FakeImages } from '../helpers/api.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// What a client sends over the WebSocket must never take the API process down: the
// messages follow the body rules of REST requests (nesting depth, valid Unicode)
// before anything walks them. The API runs as its own process here, so a crash shows
// as that process gone rather than as this test runner dying.

type Msg = Record<string, unknown> & { type: string; id?: string | null };

let api: ApiProcess;
/** Settles (with why) when the API process exits. */
let apiExited: Promise<string>;

/** Opens a connection and returns the next message after sending `text`; fails at once if the API process exits. */
async function answerTo(url: string, key: string, text: string): Promise<{ msg: Msg; ws: WebSocket }> {
  const ws = new WebSocket(url, { headers: { Authorization: key } });
  await once(ws, 'open');
  const next = once(ws, 'message') as Promise<[Buffer]>;
  ws.send(text);
  const first = await Promise.race([next, apiExited]);
  if (typeof first === 'string') throw new Error(first);
  return { msg: JSON.parse(first[0].toString()) as Msg, ws };
}

const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
const nestedObject = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('WebSocket messages a client may send', function () {
  let t: TestDatabase;
  let images: FakeImages;
  let wsUrl: string;
  let key: string;
  before(async () => {
    t = await freshDatabase('ws_messages');
    images = fakeImagesDir(['python-3.9.7']);
    api = await spawnApiProcess({ RUNBOX_DATABASE_URL: t.url, RUNBOX_IMAGES_DIR: images.dir, RUNBOX_LOG_LEVEL: 'silent' });
    apiExited = once(api.child, 'exit').then(([code, signal]) => `the API process exited (${String(code ?? signal)})`);
    wsUrl = `${api.url.replace('http:', 'ws:')}/api/v2/ws/`;
    key = (await accountWithKey(t.db, { limits: { pending: 1000, perMinute: 1000 } })).key.key;
  });
  after(async () => {
    await api?.stop();
    images?.remove();
    await t?.drop();
  });

  /** The API process is still there and answers HTTP and a fresh WebSocket. */
  async function stillAlive(): Promise<void> {
    expect(api.child.exitCode, 'API process exit code').to.equal(null);
    const res = await fetch(`${api.url}/api/health`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).to.equal(200);
    const { msg, ws } = await answerTo(wsUrl, key, 'not json');
    expect(msg).to.include({ type: 'error', code: 'bad_request' });
    ws.close();
  }

  const run = (id: string, more: string) => `{"type":"run","id":"${id}","compiler":"python-3.9.7","code":"print(1)",${more}}`;
  const deep: [string, string][] = [
    ['extra_params', run('deep-extra', `"extra_params":{"x":${nested(5000)}}`)],
    ['extra_params (objects)', run('deep-extra-obj', `"extra_params":${nestedObject(5000)}`)],
    ['tests', run('deep-tests', `"tests":[{"input":${nested(5000)}}]`)],
    ['an unknown member', run('deep-unknown', `"whatever":${nestedObject(5000)}`)],
    ['the id', `{"type":"run","id":${nested(5000)}}`],
    ['the whole message', nested(5000)],
  ];
  for (const [where, text] of deep) {
    it(`a message nested 5,000 deep in ${where} is answered bad_request on its connection; the process lives`, async () => {
      const { msg, ws } = await answerTo(wsUrl, key, text);
      expect(msg).to.include({ type: 'error', code: 'bad_request' });
      expect(msg['message']).to.match(/nested deeper than 16 levels/);
      const id = /"id":"([^"]+)"/.exec(text)?.[1] ?? null;
      expect(msg.id).to.equal(id);
      // The connection stays usable.
      const next = once(ws, 'message') as Promise<[Buffer]>;
      ws.send('{}');
      expect(JSON.parse((await next)[0].toString())).to.include({ type: 'error', code: 'bad_request' });
      ws.close();
      await stillAlive();
    });
  }

  it('many such messages at once, on many connections: every one answered, the process lives', async () => {
    const answers = await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        const { msg, ws } = await answerTo(wsUrl, key, deep[i % deep.length]![1]);
        ws.close();
        return msg.code;
      }),
    );
    expect(answers).to.deep.equal(Array.from({ length: 16 }, () => 'bad_request'));
    await stillAlive();
  });

  it("a message nested 5,000 deep on Piston's connect route is answered with an error; the process lives", async () => {
    const pistonUrl = wsUrl.replace(/\/api\/v2\/ws\/$/, '/piston/api/v2/connect');
    for (const text of [`{"type":"init","language":"python","files":[{"content":${nested(5000)}}]}`, nestedObject(5000)]) {
      const { msg, ws } = await answerTo(pistonUrl, key, text);
      expect(msg).to.deep.equal({ type: 'error', message: 'the message is nested deeper than 16 levels' });
      ws.close();
      await stillAlive();
    }
  });

  const lone: [string, string, RegExp][] = [
    ['code', '"code":"print(1)\\ud800"', /^code contains a lone surrogate/],
    ['input', '"code":"print(1)","input":"a\\udc01b"', /^input contains a lone surrogate/],
    ['extra_params', '"code":"print(1)","extra_params":{"note":"a\\ud800"}', /^extra_params\.note contains a lone surrogate/],
  ];
  for (const [field, members, message] of lone) {
    it(`a lone surrogate escape in ${field} is answered bad_request naming ${field}`, async () => {
      const text = `{"type":"run","id":"s-${field}","compiler":"python-3.9.7",${members}}`;
      const { msg, ws } = await answerTo(wsUrl, key, text);
      ws.close();
      expect(msg).to.include({ type: 'error', code: 'bad_request', id: `s-${field}` });
      expect(msg['message']).to.match(message);
      const submissions = await t.db.selectFrom('submissions').select('id').execute();
      expect(submissions).to.deep.equal([]);
    });
  }

  it('a session whose key is revoked answers invalid_key and closes the connection', async () => {
    const made = await accountWithKey(t.db);
    const ws = new WebSocket(wsUrl, { headers: { Authorization: made.key.key } });
    const messages: Msg[] = [];
    ws.on('message', (d: Buffer) => messages.push(JSON.parse(d.toString()) as Msg));
    const closed = once(ws, 'close') as Promise<[number, Buffer]>;
    await once(ws, 'open');
    await revokeKey(t.db, made.key.id);
    ws.send(JSON.stringify({ type: 'run', id: 'after-revoke', compiler: 'python-3.9.7', code: 'print(1)' }));
    const [code] = await closed;
    expect(code).to.equal(1008);
    expect(messages).to.have.length(1);
    expect(messages[0]).to.include({ type: 'error', id: 'after-revoke', code: 'invalid_key' });
    await stillAlive();
  });
});
