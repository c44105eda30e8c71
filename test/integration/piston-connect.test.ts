import { expect } from 'chai';
import { once } from 'node:events';
import { WebSocket } from 'ws';
import { keyFor, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { WsClient, type Msg } from '../helpers/ws-client.js';
import { waitForStates } from '../helpers/queue-rows.js';

// Piston's interactive WebSocket (/piston/api/v2/connect) end to end: a real client,
// the real API, runner and sandbox. Messages and close codes as Piston documents them.

const PROMPT = 'name = input("name? ")\nprint("hello " + name)\n';
const SCANF = `#include <stdio.h>
int main(void) { int a; printf("a? "); fflush(stdout); if (scanf("%d", &a) != 1) return 2; printf("twice %d\\n", 2 * a); return 0; }
`;

describe('Piston interactive WebSocket (/piston/api/v2/connect)', function () {
  this.timeout(60_000);
  let s: ResultsStack;
  let key: string;
  let base: string;
  before(async function () {
    const why = realRunsUnavailable(['python3.9', 'gcc']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('pistonws');
    await s.startRunner();
    ({ key: { key } } = await keyFor(s.db));
    base = `ws://127.0.0.1:${s.api.port}/piston`;
  });
  after(async () => s?.close());

  const types = (c: WsClient) => c.messages.map((m) => (m.type === 'data' ? `data:${m.stream as string}` : m.type));
  const stdout = (c: WsClient) => c.messages.filter((m) => m.type === 'data' && m.stream === 'stdout').map((m) => m.data).join('');
  const init = (over: Record<string, unknown> = {}) => ({ type: 'init', language: 'python3.9', version: '*', files: [{ content: PROMPT }], ...over });

  /** The handshake's refusal: status and body. */
  async function refused(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
    const ws = new WebSocket(url, { headers });
    const [, res] = (await once(ws, 'unexpected-response')) as [unknown, import('node:http').IncomingMessage];
    let text = '';
    for await (const chunk of res) text += String(chunk);
    return { status: res.statusCode ?? 0, body: JSON.parse(text) };
  }

  it('a Python program reading input: runtime, stage, the prompt, the answer written to stdin, exit, close 4999', async () => {
    const c = await WsClient.open(`${base}/api/v2/connect`, { Authorization: key });
    c.send(init());
    await c.until(() => stdout(c).includes('name? '));
    c.send({ type: 'data', stream: 'stdin', data: 'Piston\n' });
    const exit = await c.until((m) => m.type === 'exit');
    expect(await c.untilClosed()).to.deep.equal({ code: 4999, reason: 'Job Completed' });
    expect(c.messages[0]).to.deep.include({ type: 'runtime', language: 'python' });
    expect(c.messages[0]!['version']).to.match(/^3\.9/);
    expect(c.messages[1]).to.deep.equal({ type: 'stage', stage: 'run' });
    expect(stdout(c)).to.equal('name? hello Piston\n');
    expect(exit).to.deep.equal({ type: 'exit', stage: 'run', code: 0, signal: null });
    expect(types(c).at(-1)).to.equal('exit');
  });

  it('a compiled program: compile stage, its exit, run stage; the key in the path; init stdin is written first', async () => {
    const c = await WsClient.open(`${base}/${encodeURIComponent(key)}/api/v2/connect`);
    c.send(init({ language: 'c', files: [{ name: 'main.c', content: SCANF }], stdin: '21\n' }));
    const exit = await c.until((m) => m.type === 'exit' && m.stage === 'run');
    expect((await c.untilClosed()).code).to.equal(4999);
    expect(types(c).filter((t) => t !== 'data:stdout')).to.deep.equal(['runtime', 'stage', 'exit', 'stage', 'exit']);
    expect(c.messages[1]).to.deep.equal({ type: 'stage', stage: 'compile' });
    expect(c.messages[2]).to.deep.equal({ type: 'exit', stage: 'compile', code: 0, signal: null });
    expect(stdout(c)).to.equal('a? twice 42\n');
    expect(exit).to.include({ code: 0, signal: null });
  });

  it('a compile error: the compiler\'s messages on stderr, the compile stage\'s exit, no run stage', async () => {
    const c = await WsClient.open(`${base}/api/v2/connect`, { Authorization: key });
    c.send(init({ language: 'c', files: [{ content: 'int main(void) { return nope; }\n' }] }));
    await c.untilClosed();
    expect(types(c)).to.deep.equal(['runtime', 'stage', 'data:stderr', 'exit']);
    expect(c.messages[2]!['data']).to.include('nope');
    expect(c.messages[3]).to.include({ type: 'exit', stage: 'compile', signal: null });
    expect(c.messages[3]!['code']).to.not.equal(0);
  });

  it('a signal stops the program waiting for input (exit with SIGKILL)', async () => {
    const c = await WsClient.open(`${base}/api/v2/connect`, { Authorization: key });
    c.send(init());
    await c.until(() => stdout(c).includes('name? '));
    c.send({ type: 'signal', signal: 'SIGTERM' });
    expect(await c.until((m) => m.type === 'exit')).to.deep.equal({ type: 'exit', stage: 'run', code: null, signal: 'SIGKILL' });
    expect((await c.untilClosed()).code).to.equal(4999);
  });

  it('stdin sent right after the init, before the run is admitted, reaches the program; closing the connection stops the run', async () => {
    const c = await WsClient.open(`${base}/api/v2/connect`, { Authorization: key });
    c.send(init({ files: [{ content: 'print("first " + input(), flush=True)\ninput()\n' }] }));
    c.send({ type: 'data', stream: 'stdin', data: 'early\n' });
    await c.until(() => stdout(c).includes('first early\n'));
    const row = await s.db.db.selectFrom('submissions').select(['id', 'mode']).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(row.mode).to.equal('ws');
    c.close();
    await waitForStates(s.db.db, [row.id], ['finished']);
    const done = await s.db.db.selectFrom('submissions').select('result').where('id', '=', row.id).executeTakeFirstOrThrow();
    expect((done.result as { status: string }).status).to.equal('cancelled');
  });

  it("Piston's close codes: 4001 no init, 4003 before init, 4000 second init, 4004 not stdin, 4005 bad signal, 4002 after an error", async () => {
    const open = () => WsClient.open(`${base}/api/v2/connect`, { Authorization: key });
    const silent = await open();
    expect(await silent.untilClosed()).to.deep.equal({ code: 4001, reason: 'Initialization Timeout' });
    const early = await open();
    early.send({ type: 'data', stream: 'stdin', data: 'x' });
    expect((await early.untilClosed()).code).to.equal(4003);
    const twice = await open();
    twice.send(init());
    twice.send(init());
    expect((await twice.untilClosed()).code).to.equal(4000);
    const stdoutWrite = await open();
    stdoutWrite.send(init());
    stdoutWrite.send({ type: 'data', stream: 'stdout', data: 'x' });
    expect((await stdoutWrite.untilClosed()).code).to.equal(4004);
    const badSignal = await open();
    badSignal.send(init());
    badSignal.send({ type: 'signal', signal: 'SIGNOPE' });
    expect((await badSignal.untilClosed()).code).to.equal(4005);
    const unknown = await open();
    unknown.send(init({ language: 'no-such-language' }));
    expect(await unknown.untilClosed()).to.deep.equal({ code: 4002, reason: 'Notified Error' });
    expect(unknown.messages).to.deep.equal([{ type: 'error', message: 'no-such-language-* runtime is unknown' } as Msg]);
    const notJson = await open();
    notJson.send('{');
    expect((await notJson.untilClosed()).code).to.equal(4002);
    expect(notJson.messages[0]).to.deep.equal({ type: 'error', message: 'messages must be JSON objects' });
  });

  it('the OpenAPI document carries the messages of both WebSockets, from the schemas that check them', async () => {
    const doc = (await (await fetch(`http://127.0.0.1:${s.api.port}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, Record<string, unknown>>> };
    type Messages = { client: { anyOf: { properties: Record<string, { const?: string }> }[] }; server: { anyOf: { properties: Record<string, { const?: string }> }[] } };
    const types = (m: Messages['client']) => m.anyOf.map((o) => o.properties['type']!.const);
    const ws = doc.paths['/api/v2/ws/']!['get']!['x-websocket-messages'] as Messages;
    expect(types(ws.client)).to.deep.equal(['run', 'stdin', 'problem']);
    expect(types(ws.server)).to.deep.equal(['output', 'result', 'error', 'problem']);
    expect(ws.client.anyOf[0]!.properties).to.have.property('interactive');
    expect(Object.keys(ws.client.anyOf[1]!.properties)).to.deep.equal(['type', 'id', 'data', 'eof']);
    const connect = doc.paths['/piston/api/v2/connect']!['get']!['x-websocket-messages'] as Messages;
    expect(types(connect.client)).to.deep.equal(['init', 'data', 'signal']);
    expect(types(connect.server)).to.deep.equal(['runtime', 'stage', 'data', 'exit', 'error']);
  });

  it('keys as on the other Piston routes: none or a wrong one 401, a widget key 403, in Piston\'s error shape; a plain GET 426', async () => {
    expect(await refused(`${base}/api/v2/connect`)).to.deep.equal({ status: 401, body: { message: 'the Authorization header (or the key as the path segment after /piston/) with an API key is required' } });
    expect(await refused(`${base}/nope/api/v2/connect`)).to.deep.equal({ status: 401, body: { message: 'the API key is wrong' } });
    const { key: widget } = await keyFor(s.db, { kind: 'widget', allowedOrigins: ['https://a.example'] });
    const w = await refused(`${base}/api/v2/connect`, { Authorization: widget.key });
    expect(w.status).to.equal(403);
    expect((w.body as { message: string }).message).to.match(/widget key/);
    const plain = await fetch(`http://127.0.0.1:${s.api.port}/piston/api/v2/connect`, { headers: { Authorization: key } });
    expect(plain.status).to.equal(426);
    expect(await plain.json()).to.have.property('message');
  });
});
