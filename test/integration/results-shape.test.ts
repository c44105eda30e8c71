import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { WebSocket } from 'ws';
import { startSender, type Sender } from '../../src/callbacks/sender.js';
import { RUN_LIMITS } from '../../src/limits.js';
import { RESULT_FIELD_ORDER } from '../../src/result.js';
import { testConfig } from '../helpers/api.js';
import { keyFor, realRunsUnavailable, resultsStack, silentLog, type ResultsStack } from '../helpers/results-stack.js';

// What every channel delivers: the result's fields in the documented order (docs/api.md), extra_params
// exactly as the client wrote it, and output kept to whole UTF-8 characters. Compared
// on the raw text of each answer: sync, lookup, callback and WebSocket.

const PY = 'python-3.9.7';
const KEEP = RUN_LIMITS.outputKeepBytes;
/** The client's extra_params: key order (an integer-like key among them), a number form and spacing JSON.stringify would change. */
const EXTRA_SENT = '{ "zeta": 1, "10": "ten", "alpha": {"b": 2, "a": [1, 2.50]}, "note": "a, b } c" }';
const EXTRA_ECHOED = '{"zeta":1,"10":"ten","alpha":{"b":2,"a":[1,2.50]},"note":"a, b } c"}';

/** The keys of a JSON object in the order they appear in its text (none of them integer-like). */
const keysOf = (text: string): string[] => Object.keys(JSON.parse(text) as object);

/** The files fields, present only when the request asked for its files (return_files), and
 *  the judged fields, only when it was judged (test/integration/judge.test.ts holds their places;
 *  a package's points, max_points and groups: test/integration/judge-groups.test.ts). */
const OPTIONAL_FIELDS: readonly string[] = ['files', 'files_truncated', 'files_dropped', 'verdict', 'score', 'checker_message', 'problem', 'points', 'max_points', 'groups'];
/** The result fields a single-input run carries, in order. */
const SINGLE = RESULT_FIELD_ORDER.filter((k) => k !== 'tests' && !OPTIONAL_FIELDS.includes(k));

class Receiver {
  bodies: string[] = [];
  private waiters: (() => void)[] = [];
  server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.end('ok');
      for (const w of this.waiters.splice(0)) w();
    });
  });
  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/cb`;
  }
  async bodyFor(id: string): Promise<string> {
    for (;;) {
      const found = this.bodies.find((b) => (JSON.parse(b) as { id: string }).id === id);
      if (found) return found;
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
}

/** Runs over a WebSocket: the raw text of every message until the result. */
async function wsRun(url: string, key: string, runMessageText: string): Promise<{ outputs: Record<string, string>[]; resultText: string }> {
  const ws = new WebSocket(url, { headers: { Authorization: key } });
  await once(ws, 'open');
  ws.send(runMessageText);
  const outputs: Record<string, string>[] = [];
  const resultText = await new Promise<string>((resolve, reject) => {
    ws.on('message', (data) => {
      const text = data.toString();
      const m = JSON.parse(text) as Record<string, string>;
      if (m['type'] === 'output') outputs.push(m);
      else if (m['type'] === 'result') resolve(text);
      else reject(new Error(text));
    });
  });
  ws.close();
  return { outputs, resultText };
}

describe('results on every channel', function () {
  let s: ResultsStack;
  let sender: Sender;
  const receiver = new Receiver();
  let callbackUrl: string;
  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('results_shape');
    await s.startRunner();
    callbackUrl = await receiver.start();
    sender = await startSender({ db: s.db.db, config: testConfig(s.db.url, '/nonexistent', { ...s.env, RUNBOX_CALLBACK_ALLOW_PRIVATE: '1' }), log: silentLog });
  });
  after(async () => {
    await sender?.stop();
    receiver.server.close();
    await s?.close();
  });

  const wsUrl = () => `ws://127.0.0.1:${s.api.port}/api/v2/ws/`;
  const post = (path: string, key: string, text: string) =>
    fetch(`${s.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: key }, body: text });
  const lookup = async (key: string, id: string) => {
    const res = await fetch(`${s.url}/api/v2/submissions/${id}`, { headers: { Authorization: key } });
    const text = await res.text();
    const view = JSON.parse(text) as { result: unknown };
    expect(view.result).to.not.equal(undefined);
    // The result object's own text, cut out of the view's.
    const at = text.indexOf('"result":') + '"result":'.length;
    return text.slice(at, text.lastIndexOf(',"callback":'));
  };

  it('field order and extra_params as sent: synchronous answer, lookup, callback, WebSocket', async () => {
    const { key } = await keyFor(s.db, { redirectUrl: callbackUrl });
    const body = `{"code": "print(1)", "compiler": "${PY}", "extra_params": ${EXTRA_SENT}}`;

    const sync = await post('/api/v2/run-code-sync/', key.key, body);
    expect(sync.status).to.equal(200);
    const syncText = await sync.text();
    expect(keysOf(syncText)).to.deep.equal(SINGLE);
    expect(syncText).to.contain(`"extra_params":${EXTRA_ECHOED}}`);
    const id = (JSON.parse(syncText) as { id: string }).id;

    const looked = await lookup(key.key, id);
    expect(looked).to.equal(syncText);

    const queued = await post('/api/v2/run-code/', key.key, body);
    expect(queued.status).to.equal(200);
    const callback = await receiver.bodyFor(queued.headers.get('x-submission-id')!);
    expect(keysOf(callback)).to.deep.equal(SINGLE);
    expect(callback).to.contain(`"extra_params":${EXTRA_ECHOED}}`);

    const ws = await wsRun(wsUrl(), key.key, `{"type": "run", "id": "w1", "code": "print(1)", "compiler": "${PY}", "extra_params": ${EXTRA_SENT}}`);
    expect(keysOf(ws.resultText)).to.deep.equal(['type', 'id', ...SINGLE.filter((k) => k !== 'id'), 'submission_id']);
    expect(ws.resultText).to.match(new RegExp(`^\\{"type":"result","id":"w1","compiler":`));
    expect(ws.resultText).to.contain(`"extra_params":${EXTRA_ECHOED},"submission_id":`);
  });

  it('multi-test results: each test in its field order too', async () => {
    const { key } = await keyFor(s.db);
    const res = await post('/api/v2/run-code-sync/', key.key, JSON.stringify({ code: 'print(input())', compiler: PY, tests: [{ input: 'a' }, { input: 'b' }] }));
    const text = await res.text();
    expect(keysOf(text)).to.deep.equal(RESULT_FIELD_ORDER.filter((k) => !OPTIONAL_FIELDS.includes(k)));
    const tests = (JSON.parse(text) as { tests: object[] }).tests;
    for (const t of tests) expect(Object.keys(t)).to.deep.equal(['status', 'output', 'error', 'exit_code', 'signal', 'time', 'total', 'memory', 'limit_exceeded', 'truncated']);
    expect(text).to.contain('"extra_params":null,"tests":[{"status":"success","output":"a\\n"');
  });

  // Each stream is kept to its first 64 KB: stdout with 1 byte of the character inside
  // the limit, stderr with all but its last byte inside.
  for (const [name, char] of [
    ['2-byte', 'é'],
    ['3-byte', '€'],
    ['4-byte', '😀'],
  ] as const) {
    const size = Buffer.byteLength(char);
    const code = [
      'import sys',
      `sys.stdout.buffer.write(("x" * ${KEEP - 1} + "${char}" * 3).encode())`,
      `sys.stderr.buffer.write(("y" * ${KEEP - (size - 1)} + "${char}" * 3).encode())`,
    ].join('\n');
    const expectCut = (r: { output: string; error: string; truncated: boolean; stdout_truncated: boolean; stderr_truncated: boolean }) => {
      expect(r.output).to.equal('x'.repeat(KEEP - 1));
      expect(r.error).to.equal('y'.repeat(KEEP - (size - 1)));
      expect(Buffer.byteLength(r.output)).to.be.at.most(KEEP);
      expect(r.output + r.error).to.not.contain('\uFFFD');
      expect(r).to.include({ truncated: true, stdout_truncated: true, stderr_truncated: true });
    };

    it(`output cut at a whole ${name} character on both streams: sync, lookup, callback, WebSocket`, async () => {
      const { key } = await keyFor(s.db, { redirectUrl: callbackUrl });
      const body = JSON.stringify({ code, compiler: PY });
      const sync = await post('/api/v2/run-code-sync/', key.key, body);
      const syncText = await sync.text();
      expectCut(JSON.parse(syncText));
      expectCut(JSON.parse(await lookup(key.key, (JSON.parse(syncText) as { id: string }).id)));

      const queued = await post('/api/v2/run-code/', key.key, body);
      expectCut(JSON.parse(await receiver.bodyFor(queued.headers.get('x-submission-id')!)));

      const ws = await wsRun(wsUrl(), key.key, JSON.stringify({ type: 'run', id: 'cut', code, compiler: PY }));
      const result = JSON.parse(ws.resultText);
      expectCut(result);
      const streamed = (stream: string) => ws.outputs.filter((m) => m['stream'] === stream).map((m) => m['data']).join('');
      expect(streamed('stdout')).to.equal(result.output);
      expect(streamed('stderr')).to.equal(result.error);
    });
  }
});
