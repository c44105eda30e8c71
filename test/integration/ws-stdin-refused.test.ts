import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { INPUT_CHANNEL } from '../../src/queue/input-channel.js';
import { clientConfig } from '../../src/db/url.js';
import { enqueue } from '../helpers/queue-rows.js';
import { keyFor, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { WsClient } from '../helpers/ws-client.js';

// Stdin sent with an interactive run that is then refused must reach neither the table
// the runners read (submission_input) nor their LISTEN connections: it waits in the API
// process until the run is admitted and goes with the refusal. Refusals here: a compiler
// the deployment does not have, the month's allowance used up, the account's run slots
// taken, no runner slot at all; on runbox's WebSocket and on Piston's.

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('stdin of refused interactive runs is never stored', function () {
  this.timeout(60_000);
  let s: ResultsStack;
  let listener: pg.Client;
  const notified: string[] = [];

  before(async () => {
    // No runner: the stack refuses or queues; a runner row is written where a test needs one.
    s = await resultsStack('wsrefused');
    listener = new pg.Client(clientConfig(s.db.url));
    await listener.connect();
    listener.on('notification', (n) => notified.push(n.payload ?? ''));
    await listener.query(`LISTEN ${INPUT_CHANNEL}`);
  });
  after(async () => {
    await listener?.end();
    await s?.close();
  });
  beforeEach(async () => {
    notified.length = 0;
    await sql`DELETE FROM runners`.execute(s.db.db);
  });

  /** A live runner with two slots that serves `compilers` only (none runs here: its jobs stay queued). */
  async function liveRunner(compilers: Record<string, string>): Promise<void> {
    await sql`INSERT INTO runners (id, hostname, slots, launcher, compilers) VALUES ('fake-runner', 'test', 2, 'bwrap', ${JSON.stringify(compilers)}::jsonb)`.execute(s.db.db);
  }

  async function storedRows(): Promise<number> {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM submission_input`.execute(s.db.db);
    return Number(rows[0]!.n);
  }

  /** Sends an interactive run with stdin right behind it, waits for its refusal, sends more. */
  async function refusedRun(key: string, compiler: string): Promise<Record<string, unknown>> {
    const c = await WsClient.open(`ws://127.0.0.1:${s.api.port}/api/v2/ws/`, { Authorization: key });
    c.send({ type: 'run', id: 'r', code: 'print(input())\n', compiler, interactive: true });
    for (let i = 0; i < 20; i++) c.send({ type: 'stdin', id: 'r', data: `line ${i}\n` });
    const refusal = await c.until((m) => m.id === 'r' && m.type === 'error' && m.code !== 'unknown_run' && m.code !== 'run_finished');
    c.send({ type: 'stdin', id: 'r', data: 'after the refusal\n', eof: true });
    await pause(300);
    c.close();
    return refusal;
  }

  it('a compiler no recipe declares', async () => {
    await liveRunner({ 'python-3.9.7': '3.9.2' });
    const { key } = await keyFor(s.db);
    const refusal = await refusedRun(key.key, 'no-such-compiler-1.0');
    expect(refusal['code']).to.equal('bad_request');
    expect(await storedRows()).to.equal(0);
    expect(notified).to.deep.equal([]);
  });

  it('a compiler the deployment does not have', async () => {
    await liveRunner({ 'python-3.9.7': '3.9.2' });
    const { key } = await keyFor(s.db);
    const refusal = await refusedRun(key.key, 'gcc-9');
    expect(refusal['code']).to.equal('compiler_unavailable');
    expect(await storedRows()).to.equal(0);
    expect(notified).to.deep.equal([]);
  });

  it("the month's allowance used up", async () => {
    await liveRunner({ 'python-3.9.7': '3.9.2' });
    const { key, accountId } = await keyFor(s.db, { limits: { monthlyLimit: 1 } });
    await sql`INSERT INTO account_usage (account_id, month, submissions) VALUES (${accountId}, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM'), 1)`.execute(s.db.db);
    const refusal = await refusedRun(key.key, 'python-3.9.7');
    expect(refusal['code']).to.equal('monthly_limit');
    expect(await storedRows()).to.equal(0);
    expect(notified).to.deep.equal([]);
  });

  it("the account's run slots taken", async () => {
    await liveRunner({ 'python-3.9.7': '3.9.2' });
    const { key, accountId } = await keyFor(s.db, { limits: { running: 1 } });
    // A synchronous run of the account waiting for a slot holds its one run slot.
    await enqueue(s.db.db, accountId, { mode: 'sync', priority: 0 });
    const refusal = await refusedRun(key.key, 'python-3.9.7');
    expect(refusal['code']).to.equal('too_many_running');
    expect(await storedRows()).to.equal(0);
    expect(notified).to.deep.equal([]);
  });

  it('no runner slot at all (capacity)', async () => {
    const { key } = await keyFor(s.db);
    const refusal = await refusedRun(key.key, 'python-3.9.7');
    expect(refusal['code']).to.equal('capacity');
    expect(await storedRows()).to.equal(0);
    expect(notified).to.deep.equal([]);
  });

  it("Piston's connect route: an init refused, with data before and after", async () => {
    const { key } = await keyFor(s.db);
    const c = await WsClient.open(`ws://127.0.0.1:${s.api.port}/piston/api/v2/connect`, { Authorization: key.key });
    c.send({ type: 'init', language: 'python3.9', version: '*', files: [{ content: 'print(input())\n' }] });
    for (let i = 0; i < 50; i++) c.send({ type: 'data', stream: 'stdin', data: `line ${i}\n` });
    const closed = await c.untilClosed();
    expect(closed.code).to.equal(4002);
    expect(c.messages.find((m) => m.type === 'error')?.['message']).to.match(/capacity/);
    await pause(300);
    expect(await storedRows()).to.equal(0);
    expect(notified).to.deep.equal([]);
  });

  it('the same stdin is stored once a run is admitted (the check above can fail)', async () => {
    await liveRunner({ 'python-3.9.7': '3.9.2' });
    const { key } = await keyFor(s.db);
    const c = await WsClient.open(`ws://127.0.0.1:${s.api.port}/api/v2/ws/`, { Authorization: key.key });
    c.send({ type: 'run', id: 'ok', code: 'print(input())\n', compiler: 'python-3.9.7', interactive: true });
    c.send({ type: 'stdin', id: 'ok', data: 'stored\n', eof: true });
    for (let i = 0; i < 100 && (await storedRows()) < 2; i++) await pause(50);
    c.close();
    expect(await storedRows()).to.equal(2);
    expect(notified.length).to.equal(2);
  });
});
