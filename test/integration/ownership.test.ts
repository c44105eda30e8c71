import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { clientConfig } from '../../src/db/url.js';
import { claim, complete, completeAndClaim, fail, heartbeat, reapExpired, release } from '../../src/queue/index.js';
import { OUTPUT_CHANNEL } from '../../src/queue/output-channel.js';
import { publishOutput, storedOutput } from '../../src/queue/output-store.js';
import type { RunResult } from '../../src/result.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { accountUsage, enqueue, expectNoDrift, expireLease, keyUsage, makeAccount, stateOf } from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';

// Every write a runner makes about a run carries its claim (runner id and attempt
// number) and is a single statement guarded by it: a runner that lost its lease (cut off
// from the database while the lease ran out and another runner took the job over) has
// its late completion, failure, hand-back, heart-beat and live output refused, so the
// job ends with exactly one stored result, one callback and one charge.

const LEASE = 60;
const resultFor = (id: string, output: string) => successResult(id, { output });

describe('ownership of a run: late writes of a runner that lost its claim are refused', function () {
  let t: TestDatabase;
  let heard: string[];
  let listener: pg.Client;

  before(async () => {
    t = await freshDatabase('ownership');
    listener = new pg.Client(clientConfig(t.url));
    await listener.connect();
    await listener.query(`LISTEN ${OUTPUT_CHANNEL}`);
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
  });
  after(async () => {
    await listener?.end();
    await t?.drop();
  });
  beforeEach(() => {
    heard = [];
  });
  afterEach(async () => {
    await expectNoDrift(t.db);
  });

  /** An account whose key has a callback URL, and one billed job of `units` for it. */
  async function billedJob(opts: { units?: number; maxAttempts?: number; mode?: 'async' | 'ws' } = {}) {
    const account = await makeAccount(t.db, { running: 5 });
    const key = String(
      (
        await t.db
          .insertInto('api_keys')
          .values({
            account_id: account,
            key_hash: Buffer.from(`own-${Math.random()}`),
            key_prefix: 'rbx_own',
            app_name: 'own',
            redirect_url: 'https://callback.example.com/hook',
            kind: 'api',
            signing_secret: 'secret',
          })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id,
    );
    const id = await enqueue(t.db, account, {
      keyId: key,
      units: opts.units ?? 2,
      billed: true,
      maxAttempts: opts.maxAttempts ?? 3,
      ...(opts.mode ? { mode: opts.mode } : {}),
    });
    return { account, key, id };
  }

  /** The job's lease runs out while `from` is cut off, and the reaper puts it back in the queue. */
  async function loseLease(id: string): Promise<void> {
    await expireLease(t.db, id);
    expect((await reapExpired(t.db)).requeued).to.deep.equal([id]);
  }

  async function deliveries(id: string): Promise<{ payload: RunResult }[]> {
    return (await t.db.selectFrom('callback_deliveries').select(['payload']).where('submission_id', '=', id).execute()) as { payload: RunResult }[];
  }

  const quiet = () => new Promise((r) => setTimeout(r, 100));

  it('another runner took the job over: every write of the first is refused; one result, one callback, billed once', async () => {
    const { account, key, id } = await billedJob({ mode: 'ws' });
    expect((await claim(t.db, 'runner-a', 1, LEASE)).map((j) => j.id)).to.deep.equal([id]);
    // Runner A streams while it holds the claim.
    expect(await publishOutput(t.db, 'runner-a', 1, { i: id, n: 0, s: 'stdout', d: 'a0\n' })).to.equal(true);
    await loseLease(id);
    const [b] = await claim(t.db, 'runner-b', 1, LEASE);
    expect(b).to.include({ id, attempts: 2 });
    const leaseOfB = (await stateOf(t.db, id)).lease_expires_at!.getTime();

    // The link comes back: runner A's late writes arrive.
    expect(await publishOutput(t.db, 'runner-a', 1, { i: id, n: 1, s: 'stdout', d: 'a1 late\n' })).to.equal(false);
    expect(await publishOutput(t.db, 'runner-a', 1, { i: id, n: 2, end: true })).to.equal(false);
    expect(await heartbeat(t.db, { id: 'runner-a', hostname: 'a', slots: 1, launcher: 'bwrap' }, LEASE, [`${id}/1`])).to.deep.equal([]);
    expect(await complete(t.db, 'runner-a', { id, attempt: 1 }, resultFor(id, 'from a\n'))).to.equal(false);
    const turned = await completeAndClaim(t.db, 'runner-a', { id, attempt: 1 }, resultFor(id, 'from a\n'), LEASE);
    expect(turned).to.deep.include({ completed: false, next: null });
    expect(await fail(t.db, 'runner-a', { id, attempt: 1 }, 'late', { refund: true })).to.equal(false);
    expect(await release(t.db, 'runner-a', { id, attempt: 1 })).to.equal(false);

    // Nothing of that moved the job: still B's, its lease as B left it, nothing refunded.
    const during = await stateOf(t.db, id);
    expect(during).to.include({ state: 'running', locked_by: 'runner-b', attempts: 2, refunded: false });
    expect(during.lease_expires_at!.getTime()).to.equal(leaseOfB);
    expect(await deliveries(id)).to.have.length(0);

    // B streams from the start (chunk 0 of its attempt) and finishes.
    expect(await publishOutput(t.db, 'runner-b', 2, { i: id, n: 0, s: 'stdout', d: 'b0\n' })).to.equal(true);
    expect(await complete(t.db, 'runner-b', { id, attempt: 2 }, resultFor(id, 'from b\n'))).to.equal(true);
    // Late again, after B's end: still refused.
    expect(await complete(t.db, 'runner-a', { id, attempt: 1 }, resultFor(id, 'from a\n'))).to.equal(false);
    await quiet();

    const row = await stateOf(t.db, id);
    expect(row).to.include({ state: 'finished', locked_by: 'runner-b', refunded: false });
    expect((row.result as RunResult).output).to.equal('from b\n');
    // A WebSocket run has no callback; its notified output holds none of A's late chunks,
    // each chunk says its attempt, and a replay gives the latest attempt's only.
    expect(await deliveries(id)).to.have.length(0);
    const stored = await storedOutput(t.db, [id]);
    expect(stored).to.deep.equal([{ i: id, a: 2, n: 0, s: 'stdout', d: 'b0\n' }]);
    expect(heard.map((p) => JSON.parse(p) as { a: number; n: number; d?: string })).to.deep.equal([
      { i: id, a: 1, n: 0, s: 'stdout', d: 'a0\n' },
      { i: id, a: 2, n: 0, s: 'stdout', d: 'b0\n' },
    ]);
    expect(await accountUsage(t.db, account)).to.equal(2);
    expect(await keyUsage(t.db, key)).to.equal(2);
  });

  it('an asynchronous run taken over: exactly one callback, carrying the second runner\'s result', async () => {
    const { account, id } = await billedJob();
    await claim(t.db, 'runner-a', 1, LEASE);
    await loseLease(id);
    await claim(t.db, 'runner-b', 1, LEASE);
    const [aDone, bDone] = await Promise.all([
      complete(t.db, 'runner-a', { id, attempt: 1 }, resultFor(id, 'from a\n')),
      complete(t.db, 'runner-b', { id, attempt: 2 }, resultFor(id, 'from b\n')),
    ]);
    expect([aDone, bDone]).to.deep.equal([false, true]);
    const sent = await deliveries(id);
    expect(sent).to.have.length(1);
    expect(sent[0]!.payload.output).to.equal('from b\n');
    expect(await accountUsage(t.db, account)).to.equal(2);
  });

  it('the same runner claimed the job again: its stale run cannot write for the newer claim', async () => {
    const { id } = await billedJob({ mode: 'ws' });
    await claim(t.db, 'runner-a', 1, LEASE);
    await loseLease(id);
    const [again] = await claim(t.db, 'runner-a', 1, LEASE);
    expect(again!.attempts).to.equal(2);
    expect(await publishOutput(t.db, 'runner-a', 1, { i: id, n: 0, s: 'stdout', d: 'stale\n' })).to.equal(false);
    expect(await heartbeat(t.db, { id: 'runner-a', hostname: 'a', slots: 1, launcher: 'bwrap' }, LEASE, [`${id}/1`])).to.deep.equal([]);
    expect(await heartbeat(t.db, { id: 'runner-a', hostname: 'a', slots: 1, launcher: 'bwrap' }, LEASE, [`${id}/2`])).to.deep.equal([{ id, attempt: 2 }]);
    expect(await publishOutput(t.db, 'runner-a', 2, { i: id, n: 0, s: 'stdout', d: 'fresh\n' })).to.equal(true);
    expect(await complete(t.db, 'runner-a', { id, attempt: 2 }, resultFor(id, 'fresh\n'))).to.equal(true);
    await quiet();
    expect(heard.map((p) => (JSON.parse(p) as { d?: string }).d)).to.deep.equal(['fresh\n']);
  });

  it('the reaper failed the job on its last attempt: the late completion is refused, refunded once, one callback saying so', async () => {
    const { account, key, id } = await billedJob({ maxAttempts: 1, units: 3 });
    await claim(t.db, 'runner-a', 1, LEASE);
    await expireLease(t.db, id);
    expect((await reapExpired(t.db)).failed).to.deep.equal([id]);
    expect(await complete(t.db, 'runner-a', { id, attempt: 1 }, resultFor(id, 'from a\n'))).to.equal(false);
    expect(await fail(t.db, 'runner-a', { id, attempt: 1 }, 'late', { refund: true })).to.equal(false);
    const row = await stateOf(t.db, id);
    expect(row).to.include({ state: 'failed', refunded: true });
    expect(row.last_error).to.match(/lease expired/);
    const sent = await deliveries(id);
    expect(sent).to.have.length(1);
    expect(sent[0]!.payload.status).to.equal('internal_error');
    expect(await accountUsage(t.db, account)).to.equal(0);
    expect(await keyUsage(t.db, key)).to.equal(0);
  });

  it('a write racing the reaper is either before the requeue or refused, never both', async () => {
    const rounds = 20;
    for (let i = 0; i < rounds; i++) {
      const { id } = await billedJob({ units: 1 });
      await claim(t.db, 'runner-a', 1, LEASE);
      await expireLease(t.db, id);
      const [done, reaped] = await Promise.all([complete(t.db, 'runner-a', { id, attempt: 1 }, resultFor(id, 'a\n')), reapExpired(t.db)]);
      const row = await stateOf(t.db, id);
      if (done) {
        expect(row.state).to.equal('finished');
        expect(reaped.requeued).to.not.include(id);
      } else {
        expect(row.state).to.equal('queued');
        expect(reaped.requeued).to.include(id);
        await sql`UPDATE submissions SET state = 'failed', finished_at = now() WHERE id = ${id}`.execute(t.db);
      }
    }
  });
});
