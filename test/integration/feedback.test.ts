import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKey } from '../../src/accounts/keys.js';
import { startSender, type Sender } from '../../src/callbacks/sender.js';
import { loadConfig } from '../../src/config.js';
import { judgedTests } from '../../src/judge/submission-tests.js';
import { keyAsker, ownerAsker } from '../../src/problems/feedback.js';
import type { RunResult } from '../../src/result.js';
import { testConfig } from '../helpers/api.js';
import { billedSubmissions, keyFor, postJson, resultsStack, silentLog, skipUnlessRealRuns, type ResultsStack } from '../helpers/results-stack.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';
import { WsClient } from '../helpers/ws-client.js';

// Exercises with hidden tests, end to end (real API, runner, sandbox, Postgres): a
// problem's feedback setting withholds its hidden tests' inputs and expected outputs at
// every exit a result leaves by (synchronous answers, lookups, callbacks, WebSocket
// messages, Judge0's lookups, MCP tools, the portal's test tables) from student keys,
// widget keys and other accounts judging a public problem, while its account's other
// keys see everything. Each answer is searched, serialized, for the hidden strings.

const PY = 'python-3.9.7';
const SITE = 'https://course.example';
/** In the hidden test's input (the program prints it and writes it to stderr). */
const HIDDEN_IN = 'qz7f3a';
/** The hidden test's expected output (its checker's message would quote it). */
const HIDDEN_ANSWER = 'wk9c2b';
const SECRETS = [HIDDEN_IN, HIDDEN_ANSWER];
// Accepted on the sample; wrong on the hidden test, and it spells its input out in every
// channel it has: stdout, stderr, its exit code, a file it returns.
const CODE = [
  'import sys',
  'd = sys.stdin.read()',
  'print(d.strip().replace("in", "out"))',
  'sys.stderr.write(d)',
  'open("/box/out/seen.txt", "w").write(d)',
  'sys.exit(0)',
].join('\n');
const PROBLEM = {
  name: 'Echo out',
  tests: [
    { name: 'sample-1', input: 'sample in\n', expected_output: 'sample out\n', sample: true },
    { name: 'hidden-1', input: `${HIDDEN_IN} in\n`, expected_output: `${HIDDEN_ANSWER}\n` },
  ],
};

/** Fails naming the secret and where it showed. */
function expectWithheld(where: string, answer: unknown): void {
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
  for (const secret of SECRETS) expect(text, `${where} shows ${secret}: ${text}`).to.not.include(secret);
}

/** Callbacks as received: the bodies by submission id. */
class Receiver {
  bodies = new Map<string, string>();
  private waiters: (() => void)[] = [];
  server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      this.bodies.set(String(req.headers['x-runbox-submission']), body);
      res.writeHead(204).end();
      for (const w of this.waiters.splice(0)) w();
    });
  });
  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  async bodyOf(id: string): Promise<string> {
    while (!this.bodies.has(id)) await new Promise<void>((r) => this.waiters.push(r));
    return this.bodies.get(id)!;
  }
}

describe('problem feedback: hidden tests stay on the server', function () {
  let s: ResultsStack;
  let receiver: Receiver;
  let hook: string;
  let owner: { accountId: string; key: string };
  let student: { accountId: string; key: string };
  let widget: string;
  let other: { accountId: string; key: string };
  let problemId: string;
  let sender: Sender | undefined;

  before(async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    receiver = new Receiver();
    hook = await receiver.start();
    s = await resultsStack('feedback', {
      RUNBOX_SANDBOX_UID_BASE: String(loadConfig().RUNBOX_SANDBOX_UID_BASE + TEST_SLOT_BASE),
      RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
    });
    await s.startRunner();
    sender = await startSender({ db: s.db.db, config: testConfig(s.db.url, '/nonexistent', { RUNBOX_CALLBACK_ALLOW_PRIVATE: '1', RUNBOX_CALLBACK_BACKOFF_MS: '200' }), log: silentLog });
    const o = await keyFor(s.db, { redirectUrl: hook, limits: { perMinute: 1000 } });
    owner = { accountId: o.accountId, key: o.key.key };
    student = { accountId: o.accountId, key: (await createKey(s.db.db, { accountId: o.accountId, appName: 'class', redirectUrl: hook, student: true })).key };
    widget = (await createKey(s.db.db, { accountId: o.accountId, appName: 'page', kind: 'widget', allowedOrigins: [SITE] })).key;
    const b = await keyFor(s.db, { redirectUrl: hook });
    other = { accountId: b.accountId, key: b.key.key };
    const res = await postJson(`${s.url}/api/v2/problems/`, owner.key, { ...PROBLEM, feedback: 'samples', public: true });
    expect(res.status, await res.clone().text()).to.equal(201);
    const created = (await res.json()) as { id: string; feedback: string; public: boolean };
    expect(created).to.include({ feedback: 'samples', public: true });
    problemId = created.id;
  });
  after(async () => {
    await sender?.stop();
    await s?.close();
    receiver?.server.close();
  });

  const patch = async (settings: object, key = owner.key) =>
    fetch(`${s.url}/api/v2/problems/${problemId}`, { method: 'PATCH', headers: { Authorization: key, 'Content-Type': 'application/json' }, body: JSON.stringify(settings) });
  const sync = async (key: string) => {
    const res = await postJson(`${s.url}/api/v2/run-code-sync/`, key, { compiler: PY, code: CODE, problem: problemId, return_files: true });
    const text = await res.text();
    expect(res.status, text).to.equal(200);
    return { text, result: JSON.parse(text) as RunResult };
  };
  const lookup = async (key: string, id: string) => {
    const res = await fetch(`${s.url}/api/v2/submissions/${id}`, { headers: { Authorization: key } });
    expect(res.status).to.equal(200);
    return res.text();
  };

  it('the owner\'s own key sees everything (the search below can fail)', async () => {
    const { text, result } = await sync(owner.key);
    expect(result).to.include({ verdict: 'wrong_answer', score: 0.5 });
    for (const secret of SECRETS) expect(text).to.include(secret);
    expect(result.tests![1]).to.include({ name: 'hidden-1', verdict: 'wrong_answer', exit_code: 0 });
    expect(result.tests![1]!.files).to.have.length(1);
  });

  for (const feedback of ['samples', 'first_failure', 'verdict'] as const) {
    describe(`feedback ${feedback}`, () => {
      before(async () => {
        const res = await patch({ feedback });
        expect(res.status, await res.clone().text()).to.equal(200);
        expect(await res.json()).to.include({ feedback, public: true });
      });

      it('student key: the synchronous answer, its lookup and its Judge0 lookup withhold the hidden test; the owner key sees it whole', async () => {
        const { text, result } = await sync(student.key);
        expectWithheld('the synchronous answer', text);
        expect(result).to.include({ verdict: 'wrong_answer', score: 0.5, output: '', error: '', exit_code: null, checker_message: null });
        expect(result).to.not.have.property('files');
        if (feedback === 'samples') {
          expect(result.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['sample-1', 'accepted'], ['hidden-1', 'wrong_answer']]);
          expect(result.tests![0]).to.include({ output: 'sample out\n', exit_code: 0 });
          expect(result.tests![1]).to.include({ output: '', error: '', exit_code: null, time: null, memory: null, checker_message: null });
        } else if (feedback === 'first_failure') {
          expect(result.tests!.map((t) => [t.name, t.verdict])).to.deep.equal([['hidden-1', 'wrong_answer']]);
        } else {
          expect(result).to.not.have.property('tests');
        }
        expectWithheld('the lookup', await lookup(student.key, result.id));
        const judge0 = await fetch(`${s.url}/judge0/submissions/${result.id}?base64_encoded=false&fields=*`, { headers: { 'X-Auth-Token': student.key } });
        expect(judge0.status).to.equal(200);
        expectWithheld('the Judge0 lookup', await judge0.text());
        // The owner's key sees the student's run whole; the portal's owner's tables too.
        const full = await lookup(owner.key, result.id);
        for (const secret of SECRETS) expect(full).to.include(secret);
        expect(JSON.stringify(await judgedTests(s.db.db, ownerAsker(owner.accountId), result.id))).to.include(HIDDEN_ANSWER);
        expectWithheld("the portal's tests, for the student key", await judgedTests(s.db.db, keyAsker({ accountId: owner.accountId, kind: 'api', student: true }), result.id));
      });

      it("callbacks: a student key's and another account's withhold the hidden test, the owner key's does not", async () => {
        const posted = await Promise.all(
          [student.key, other.key, owner.key].map(async (key) => {
            const res = await postJson(`${s.url}/api/v2/run-code/`, key, { compiler: PY, code: CODE, problem: problemId });
            expect(res.status, await res.clone().text()).to.equal(200);
            return res.headers.get('x-submission-id')!;
          }),
        );
        expectWithheld("the student key's callback", await receiver.bodyOf(posted[0]!));
        expectWithheld("the other account's callback", await receiver.bodyOf(posted[1]!));
        expect(await receiver.bodyOf(posted[2]!)).to.include(HIDDEN_ANSWER);
      });

      it('another account judging the public problem: withheld everywhere, billed to it', async () => {
        const before = await billedSubmissions(s, other.accountId);
        const { text, result } = await sync(other.key);
        expectWithheld('the synchronous answer', text);
        expect(result.verdict).to.equal('wrong_answer');
        expect(await billedSubmissions(s, other.accountId)).to.equal(before + 2);
        expectWithheld('the lookup', await lookup(other.key, result.id));
        // Its portal pages: the submission's tests as its owner's session sees them.
        expectWithheld("the portal's tests", await judgedTests(s.db.db, ownerAsker(other.accountId), result.id));
      });

      it('widget key over the WebSocket: no output messages, the result withheld; the problem message shows samples only', async () => {
        const c = await WsClient.open(`ws://127.0.0.1:${s.api.port}/api/v2/ws/?key=${encodeURIComponent(widget)}`, {}, SITE);
        try {
          c.send({ type: 'problem', id: 'p', problem: problemId });
          const p = await c.until((m) => m.id === 'p');
          expect(p).to.deep.include({ type: 'problem' });
          expect((p as unknown as { problem: { samples: unknown[]; hidden_tests: number; feedback: string } }).problem).to.deep.include({
            samples: [{ name: 'sample-1', input: 'sample in\n', expected_output: 'sample out\n' }],
            hidden_tests: 1,
            feedback,
          });
          c.send({ type: 'run', id: 'r', compiler: PY, code: CODE, problem: problemId });
          const r = await c.until((m) => m.type === 'result' || m.type === 'error');
          expect(r, JSON.stringify(r)).to.include({ type: 'result', verdict: 'wrong_answer' });
          expect(c.messages.filter((m) => m.type === 'output')).to.deep.equal([]);
          expectWithheld('the WebSocket messages', c.messages);
        } finally {
          c.close();
        }
      });

      it("another account's widget key on the public problem: its samples, its verdict, nothing hidden", async () => {
        const otherWidget = (await createKey(s.db.db, { accountId: other.accountId, appName: 'page', kind: 'widget', allowedOrigins: [SITE] })).key;
        const c = await WsClient.open(`ws://127.0.0.1:${s.api.port}/api/v2/ws/?key=${encodeURIComponent(otherWidget)}`, {}, SITE);
        try {
          c.send({ type: 'problem', id: 'p', problem: problemId });
          expect(await c.until((m) => m.id === 'p')).to.include({ type: 'problem' });
          c.send({ type: 'run', id: 'r', compiler: PY, code: CODE, problem: problemId });
          expect(await c.until((m) => m.type === 'result' || m.type === 'error')).to.include({ type: 'result', verdict: 'wrong_answer' });
          expectWithheld('the WebSocket messages', c.messages);
        } finally {
          c.close();
        }
      });

      it('student key through MCP: the judge tool and get_submission withhold the hidden test', async () => {
        const client = new Client({ name: 'runbox-test', version: '1' });
        await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { Authorization: student.key } } }));
        try {
          const judged = await client.callTool({ name: 'judge', arguments: { compiler: PY, code: CODE, problem: problemId } });
          expect(judged.isError ?? false, JSON.stringify(judged)).to.equal(false);
          expectWithheld('the judge tool', judged);
          const id = /submission:? ([0-9a-f-]{36})/.exec(JSON.stringify(judged))?.[1];
          expect(id, JSON.stringify(judged)).to.be.a('string');
          expectWithheld('get_submission', await client.callTool({ name: 'get_submission', arguments: { id } }));
        } finally {
          await client.close();
        }
      });
    });
  }

  // After the settings above (mocha runs a level's own tests before its describes).
  describe('afterwards', () => {
    it('a private problem is not found by another account; a student key cannot change problems', async () => {
      expect((await patch({ public: false })).status).to.equal(200);
      const res = await postJson(`${s.url}/api/v2/run-code-sync/`, other.key, { compiler: PY, code: CODE, problem: problemId });
      expect(res.status).to.equal(404);
      expect((await fetch(`${s.url}/api/v2/problems/${problemId}`, { headers: { Authorization: other.key } })).status).to.equal(404);
      const refused = await patch({ feedback: 'full' }, student.key);
      expect(refused.status).to.equal(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('student_key');
      const bad = await patch({ feedback: 'everything' });
      expect(bad.status).to.equal(400);
    });

    it('feedback full: a student key sees everything again', async () => {
      expect((await patch({ feedback: 'full' })).status).to.equal(200);
      const { text } = await sync(student.key);
      for (const secret of SECRETS) expect(text).to.include(secret);
    });
  });
});
