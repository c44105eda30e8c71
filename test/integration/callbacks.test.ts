import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect } from 'chai';
import { execa } from 'execa';
import { sql } from 'kysely';
import pino from 'pino';
import { createAccount } from '../../src/accounts/accounts.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { claimDeliveries } from '../../src/callbacks/claim.js';
import { postCallback } from '../../src/callbacks/post.js';
import { deliveriesOf, queueRedelivery, redeliver } from '../../src/callbacks/redeliver.js';
import { startSender, type Sender } from '../../src/callbacks/sender.js';
import { verifySignature } from '../../src/callbacks/sign.js';
import type { Config } from '../../src/config.js';
import { claim, complete, fail, reapExpired } from '../../src/queue/index.js';
import type { RunResult } from '../../src/result.js';
import { testConfig } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { enqueue, expireLease, waitForStates } from '../helpers/queue-rows.js';
import { keyFor, postJson, realRunsUnavailable, resultsStack } from '../helpers/results-stack.js';
import { successResult } from '../helpers/run-result.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// The callback outbox and sender against a real receiver on 127.0.0.1: signatures,
// retries after errors and timeouts, dead letters, restarts, and the SSRF guard.

type Reply = number | 'hang';

interface Received {
  headers: IncomingMessage['headers'];
  body: string;
}

/** A receiver answering each request with the next scripted reply (then 200). */
class Receiver {
  server: Server;
  got: Received[] = [];
  script: Reply[] = [];
  private waiters: (() => void)[] = [];
  private hanging: ServerResponse[] = [];
  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const reply = this.script.shift() ?? 200;
        if (reply === 'hang') this.hanging.push(res);
        else res.writeHead(reply).end();
        for (const w of this.waiters.splice(0)) w();
      });
    });
  }
  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }
  async waitFor(n: number): Promise<void> {
    while (this.got.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }
  close(): Promise<void> {
    for (const r of this.hanging) r.destroy();
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}

const log = pino({ level: 'silent' });

const resultFor = (id: string, extra: Record<string, unknown> | null) => successResult(id, { output: 'hello\n', extra_params: extra });

async function waitForDelivery(db: TestDatabase, submissionId: string, states: string[]) {
  for (;;) {
    const rows = await deliveriesOf(db.db, submissionId);
    const last = rows[rows.length - 1];
    if (last && states.includes(last.state)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('callbacks', function () {
  let db: TestDatabase;
  let receiver: Receiver;
  let url: string;
  let config: Config;
  let accountId: string;
  let key: CreatedKey;
  const senders: Sender[] = [];
  const start = async (extra: Record<string, string> = {}) => {
    const s = await startSender({ db: db.db, config: { ...config, ...testConfig(db.url, '/nonexistent', { ...baseEnv, ...extra }) }, log });
    senders.push(s);
    return s;
  };
  const baseEnv = {
    RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
    RUNBOX_CALLBACK_TIMEOUT_MS: '300',
    RUNBOX_CALLBACK_BACKOFF_MS: '100',
    RUNBOX_CALLBACK_MAX_ATTEMPTS: '3',
    RUNBOX_POLL_MS: '200',
  };

  /** A submission of the key, claimed and completed through the queue's transitions. */
  async function finishedSubmission(extra: Record<string, unknown> | null = { ticket: 42 }): Promise<string> {
    const id = await enqueue(db.db, accountId, { keyId: key.id });
    if (extra) await sql`UPDATE submissions SET extra_params = ${JSON.stringify(extra)}::jsonb WHERE id = ${id}`.execute(db.db);
    const [job] = await claim(db.db, 'runner-test', 1, 60);
    expect(job!.id).to.equal(id);
    expect(await complete(db.db, 'runner-test', id, resultFor(id, extra))).to.equal(true);
    return id;
  }

  before(async () => {
    db = await freshDatabase('callbacks');
    receiver = new Receiver();
    url = await receiver.start();
    config = testConfig(db.url, '/nonexistent', baseEnv);
    accountId = (await createAccount(db.db, `cb-${process.pid}@example.com`)).id;
    key = await createKey(db.db, { accountId, appName: 'callbacks', redirectUrl: url });
  });
  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.stop()));
    receiver.got = [];
    receiver.script = [];
  });
  after(async () => {
    await receiver?.close();
    await db?.drop();
  });

  it('writes the delivery in the same transaction as the job end, for complete, fail and the final reap', async () => {
    const done = await finishedSubmission();
    expect((await deliveriesOf(db.db, done)).map((d) => d.state)).to.deep.equal(['pending']);

    const failedId = await enqueue(db.db, accountId, { keyId: key.id });
    await claim(db.db, 'runner-test', 1, 60);
    await fail(db.db, 'runner-test', failedId, 'boom', { refund: true });
    const failed = await db.db.selectFrom('callback_deliveries').select('payload').where('submission_id', '=', failedId).executeTakeFirstOrThrow();
    expect((failed.payload as RunResult).status).to.equal('internal_error');

    const reaped = await enqueue(db.db, accountId, { keyId: key.id, maxAttempts: 1 });
    await claim(db.db, 'runner-test', 1, 60);
    await expireLease(db.db, reaped);
    expect((await reapExpired(db.db)).failed).to.deep.equal([reaped]);
    expect(await deliveriesOf(db.db, reaped)).to.have.length(1);

    // A key without a redirect URL has no callback.
    const silentKey = await createKey(db.db, { accountId, appName: 'no callback' });
    const silent = await enqueue(db.db, accountId, { keyId: silentKey.id });
    await claim(db.db, 'runner-test', 1, 60);
    await complete(db.db, 'runner-test', silent, resultFor(silent, null));
    expect(await deliveriesOf(db.db, silent)).to.have.length(0);
    await sql`DELETE FROM callback_deliveries`.execute(db.db);
  });

  it('POSTs the signed result with extra_params and the documented headers', async () => {
    await start();
    const id = await finishedSubmission({ ticket: 7, tags: ['a'] });
    const delivered = await waitForDelivery(db, id, ['delivered', 'dead']);
    expect(delivered.state).to.equal('delivered');
    expect(delivered.last_status).to.equal(200);
    const got = receiver.got.find((g) => g.headers['x-runbox-submission'] === id)!;
    expect(got.headers['content-type']).to.equal('application/json');
    expect(got.headers['x-runbox-delivery']).to.equal(delivered.id);
    const signature = String(got.headers['x-runbox-signature']);
    expect(verifySignature(key.signing_secret!, got.body, signature)).to.equal(true);
    expect(verifySignature('wrong secret', got.body, signature)).to.equal(false);
    const t = Number(/t=(\d+)/.exec(signature)![1]);
    expect(Math.abs(t - Date.now() / 1000)).to.be.below(300);
    const body = JSON.parse(got.body) as RunResult;
    expect(body.id).to.equal(id);
    expect(body.output).to.equal('hello\n');
    expect(body.extra_params).to.deep.equal({ ticket: 7, tags: ['a'] });
  });

  it('retries after a 500 and after a timeout, then delivers', async () => {
    receiver.script = [500, 'hang'];
    await start();
    const id = await finishedSubmission();
    const d = await waitForDelivery(db, id, ['delivered', 'dead']);
    expect(d.state).to.equal('delivered');
    expect(d.attempts).to.equal(3);
    expect(receiver.got.filter((g) => g.headers['x-runbox-submission'] === id)).to.have.length(3);
    // Every attempt of one delivery carries the same delivery id.
    expect(new Set(receiver.got.map((g) => g.headers['x-runbox-delivery']))).to.have.property('size', 1);
  });

  it('marks a delivery dead after its last attempt, with the reason', async () => {
    receiver.script = [500, 502, 503];
    await start();
    const id = await finishedSubmission();
    const d = await waitForDelivery(db, id, ['delivered', 'dead']);
    expect(d.state).to.equal('dead');
    expect(d.attempts).to.equal(3);
    expect(d.last_status).to.equal(503);
    expect(d.last_error).to.match(/503/);
    expect(d.next_attempt_at).to.equal(null);
  });

  it('keeps a pending delivery across a sender restart', async () => {
    // One failure, then a long backoff: the first sender stops while the retry waits.
    receiver.script = [500];
    const first = await start({ RUNBOX_CALLBACK_BACKOFF_MS: '1500' });
    const id = await finishedSubmission();
    await receiver.waitFor(1);
    for (;;) {
      const [d] = await deliveriesOf(db.db, id);
      if (d!.state === 'pending' && d!.last_status === 500) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await first.stop();
    const [waiting] = await deliveriesOf(db.db, id);
    expect(waiting!.state).to.equal('pending');
    expect(waiting!.next_attempt_at).to.be.an.instanceOf(Date);
    await start();
    const d = await waitForDelivery(db, id, ['delivered', 'dead']);
    expect(d.state).to.equal('delivered');
    expect(d.attempts).to.equal(2);
  });

  it('two senders side by side deliver each callback once', async () => {
    await Promise.all([start(), start()]);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) ids.push(await finishedSubmission());
    for (const id of ids) await waitForDelivery(db, id, ['delivered']);
    const seen = receiver.got.map((g) => String(g.headers['x-runbox-submission']));
    expect([...seen].sort()).to.deep.equal([...ids].sort());
  });

  it('takes over a delivery whose sender died mid-attempt once its lease runs out', async () => {
    const id = await finishedSubmission();
    // A sender claims it and is never heard of again.
    const [ghost] = await claimDeliveries(db.db, 'ghost-sender', 1, 300, 3);
    expect(ghost!.submission_id).to.equal(id);
    await start();
    const d = await waitForDelivery(db, id, ['delivered', 'dead']);
    expect(d.state).to.equal('delivered');
    expect(d.attempts).to.equal(2);
    expect(receiver.got).to.have.length(1);
  });

  it('redelivers a submission as a new delivery', async () => {
    await start();
    const id = await finishedSubmission();
    await waitForDelivery(db, id, ['delivered']);
    const again = await redeliver(db.db, id);
    expect(again).to.be.a('string');
    const d = await waitForDelivery(db, id, ['delivered']);
    expect(d.id).to.equal(again);
    expect(await deliveriesOf(db.db, id)).to.have.length(2);
  });

  it('admin CLI: callback list and callback redeliver', async () => {
    await start();
    const id = await finishedSubmission();
    await waitForDelivery(db, id, ['delivered']);
    const admin = (args: string[]) =>
      execa(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args], { env: { RUNBOX_DATABASE_URL: db.url }, reject: false });
    const listed = await admin(['callback', 'list', '--submission', id]);
    expect(listed.exitCode, listed.stderr).to.equal(0);
    const rows = JSON.parse(listed.stdout) as { state: string; attempts: number; last_status: number }[];
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ state: 'delivered', attempts: 1, last_status: 200 });
    const again = await admin(['callback', 'redeliver', '--submission', id]);
    expect(again.exitCode, again.stderr).to.equal(0);
    const { delivery, already_queued } = JSON.parse(again.stdout) as { delivery: string; already_queued: boolean };
    expect(already_queued).to.equal(false);
    expect((await waitForDelivery(db, id, ['delivered'])).id).to.equal(delivery);
    const bad = await admin(['callback', 'list', '--submission', 'nope']);
    expect(bad.exitCode).to.equal(2);
  });

  it('queues a delivery still pending only once, however many redeliveries are asked for at once', async () => {
    // No sender yet: the run's own delivery stays pending.
    const id = await finishedSubmission();
    const [first] = await deliveriesOf(db.db, id);
    const asks = await Promise.all(
      Array.from({ length: 25 }, (_, i) => queueRedelivery(db.db, id, i % 2 ? 'operator' : { portalAccount: accountId })),
    );
    for (const r of asks) expect(r).to.deep.equal({ already: first!.id });
    expect(await deliveriesOf(db.db, id)).to.have.length(1);
    await start();
    await waitForDelivery(db, id, ['delivered']);
    // Delivered: 25 at once queue exactly one more (with the sender stopped, so it stays
    // pending through the burst), and the receiver hears the result twice in all.
    await Promise.all(senders.splice(0).map((s) => s.stop()));
    const again = await Promise.all(Array.from({ length: 25 }, () => queueRedelivery(db.db, id, { portalAccount: accountId })));
    expect(again.filter((r) => r !== null && 'queued' in r)).to.have.length(1);
    expect(again.filter((r) => r !== null && 'already' in r)).to.have.length(24);
    await start();
    await waitForDelivery(db, id, ['delivered']);
    const rows = await db.db.selectFrom('callback_deliveries').select('redelivered_by').where('submission_id', '=', id).orderBy('created_at').execute();
    expect(rows.map((r) => r.redelivered_by)).to.deep.equal([null, 'portal']);
    expect(receiver.got.filter((g) => g.headers['x-runbox-submission'] === id)).to.have.length(2);
  });

  describe('SSRF guard (private addresses not allowed)', () => {
    const targets = ['http://127.0.0.1:9/x', 'http://10.0.0.1/x', 'http://169.254.169.254/latest/meta-data', 'http://[::1]:9/x', 'http://localhost:9/x'];
    for (const target of targets) {
      it(`refuses ${target} as a permanent failure without connecting`, async () => {
        const outcome = await postCallback(target, '{}', { timeoutMs: 1000, allowPrivate: false, headers: {} });
        expect(outcome.ok).to.equal(false);
        if (outcome.ok) return;
        expect(outcome.permanent).to.equal(true);
        expect(outcome.error).to.match(/non-public address: .* \(an operator allows such addresses, for local use, with RUNBOX_CALLBACK_ALLOW_PRIVATE=true\)$/);
      });
    }

    it('marks a delivery to the local receiver dead at once, and the receiver never hears of it', async () => {
      await start({ RUNBOX_CALLBACK_ALLOW_PRIVATE: '0' });
      const id = await finishedSubmission();
      const d = await waitForDelivery(db, id, ['delivered', 'dead']);
      expect(d.state).to.equal('dead');
      expect(d.attempts).to.equal(1);
      expect(d.last_error).to.match(/127\.0\.0\.1 is loopback/);
      expect(receiver.got).to.have.length(0);
    });

    it('connects by name through the address it checked (private allowed)', async () => {
      const port = new URL(url).port;
      const outcome = await postCallback(`http://localhost:${port}/named`, '{"n":1}', {
        timeoutMs: 2000,
        allowPrivate: true,
        headers: { 'Content-Type': 'application/json' },
      });
      expect(outcome).to.deep.equal({ ok: true, status: 200 });
      expect(receiver.got.at(-1)!.body).to.equal('{"n":1}');
      expect(receiver.got.at(-1)!.headers.host).to.equal(`localhost:${port}`);
    });

    it('does not follow redirects', async () => {
      const redirector = createServer((_req, res) => res.writeHead(302, { Location: 'http://169.254.169.254/' }).end());
      redirector.listen(0, '127.0.0.1');
      await once(redirector, 'listening');
      const port = (redirector.address() as AddressInfo).port;
      const outcome = await postCallback(`http://127.0.0.1:${port}/`, '{}', { timeoutMs: 1000, allowPrivate: true, headers: {} });
      redirector.close();
      expect(outcome).to.deep.include({ ok: false, status: 302, permanent: false });
    });
  });

  it('end to end: run-code, a real runner and sandbox, the sender, a signed POST with the result', async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    const stack = await resultsStack('callbacks_e2e', baseEnv);
    try {
      await stack.startRunner();
      const sender = await startSender({ db: stack.db.db, config: testConfig(stack.db.url, '/nonexistent', baseEnv), log });
      senders.push(sender);
      const { key: k } = await keyFor(stack.db, { redirectUrl: url });
      const posted = await postJson(`${stack.url}/api/v2/run-code/`, k.key, { code: 'print(input())', input: 'ping', compiler: 'python-3.9.7', extra_params: { order: 9 } });
      expect(posted.status).to.equal(200);
      const id = posted.headers.get('x-submission-id')!;
      await waitForStates(stack.db.db, [id], ['finished']);
      for (;;) {
        const rows = await deliveriesOf(stack.db.db, id);
        if (rows[0]?.state === 'delivered') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const got = receiver.got.find((g) => g.headers['x-runbox-submission'] === id)!;
      expect(verifySignature(k.signing_secret!, got.body, String(got.headers['x-runbox-signature']))).to.equal(true);
      expect(JSON.parse(got.body)).to.deep.include({ id, status: 'success', output: 'ping\n', extra_params: { order: 9 } });
    } finally {
      await Promise.all(senders.splice(0).map((x) => x.stop()));
      await stack.close();
    }
  });
});
