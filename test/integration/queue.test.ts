import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { connect } from '../../src/db/connect.js';
import { clientConfig } from '../../src/db/url.js';
import { claim, complete, completeAndClaim, createDoneWatcher, createWaker, DONE_CHANNEL, fail, heartbeat, JOBS_CHANNEL, reapExpired, release } from '../../src/queue/index.js';
import type { RunResult } from '../../src/result.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import {
  accountUsage,
  enqueue,
  expectNoDrift,
  expireLease,
  keyUsage,
  makeAccount,
  makeKey,
  stateOf,
} from '../helpers/queue-rows.js';
import { successResult } from '../helpers/run-result.js';

const LEASE = 60;

const resultFor = (id: string, output = 'ok\n') => successResult(id, { output });

describe('queue', function () {
  let t: TestDatabase;

  before(async () => {
    t = await freshDatabase('queue');
  });
  after(async () => {
    await t?.drop();
  });
  beforeEach(async () => {
    // Each scenario starts from an empty queue.
    await sql`DELETE FROM submissions`.execute(t.db);
    await sql`UPDATE accounts SET running_now = 0`.execute(t.db);
  });
  afterEach(async () => {
    await expectNoDrift(t.db);
  });

  it('claims in (priority, run_at, created_at) order and leaves future jobs alone', async () => {
    const acct = await makeAccount(t.db, { running: 10 });
    const base = Date.now() - 60_000;
    const late = await enqueue(t.db, acct, { createdAt: new Date(base + 3000), runAt: new Date(base + 3000) });
    const early = await enqueue(t.db, acct, { createdAt: new Date(base + 1000), runAt: new Date(base + 1000) });
    const urgent = await enqueue(t.db, acct, { priority: -5, createdAt: new Date(base + 5000), runAt: new Date(base + 5000) });
    const sameRunAtOlder = await enqueue(t.db, acct, { createdAt: new Date(base), runAt: new Date(base + 2000) });
    const future = await enqueue(t.db, acct, { runAt: new Date(Date.now() + 3_600_000) });

    const got = await claim(t.db, 'r1', 10, LEASE);
    expect(got.map((j) => j.id)).to.deep.equal([urgent, early, sameRunAtOlder, late]);
    expect((await stateOf(t.db, future)).state).to.equal('queued');
    for (const j of got) {
      expect(j.attempts).to.equal(1);
      expect(j.account_id).to.equal(acct);
      const row = await stateOf(t.db, j.id);
      expect(row.state).to.equal('running');
      expect(row.locked_by).to.equal('r1');
      expect(row.started_at).to.be.instanceOf(Date);
      expect(row.lease_expires_at!.getTime()).to.be.greaterThan(Date.now());
    }
    const acctRow = await t.db.selectFrom('accounts').select('running_now').where('id', '=', acct).executeTakeFirstOrThrow();
    expect(acctRow.running_now).to.equal(4);
  });

  it('hands every job to exactly one of many concurrent claimers (SKIP LOCKED)', async () => {
    const accounts = await Promise.all(Array.from({ length: 10 }, () => makeAccount(t.db, { running: 100 })));
    const ids = new Set<string>();
    for (let i = 0; i < 60; i++) ids.add(await enqueue(t.db, accounts[i % accounts.length]!));
    const batches = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(t.db, `r${i}`, 20, LEASE)));
    const claimed = batches.flat().map((j) => j.id);
    expect(claimed).to.have.length(60);
    expect(new Set(claimed)).to.deep.equal(ids);
    // Each job's lease belongs to the claimer that got it.
    for (const [i, batch] of batches.entries()) {
      for (const j of batch) expect((await stateOf(t.db, j.id)).locked_by).to.equal(`r${i}`);
    }
  });

  it('never lets an account run more jobs at once than its limit, across concurrent claimers', async () => {
    const limited = await makeAccount(t.db); // the Free plan: 2 at once
    const overridden = await makeAccount(t.db, { running: 3 });
    const limits = new Map([
      [limited, 2],
      [overridden, 3],
    ]);
    for (let i = 0; i < 20; i++) {
      await enqueue(t.db, limited);
      await enqueue(t.db, overridden);
    }
    // Held in this process: raised after a claim commits, lowered before its completion
    // commits, so it never exceeds what the database holds at that moment.
    const held = new Map<string, number>([...limits.keys()].map((a) => [a, 0]));
    let maxSeen = new Map<string, number>([...limits.keys()].map((a) => [a, 0]));
    const done: string[] = [];
    const violations: string[] = [];

    async function claimer(name: string) {
      for (;;) {
        const jobs = await claim(t.db, name, 3, LEASE);
        if (jobs.length === 0) {
          const left = await t.db.selectFrom('submissions').select('id').where('state', 'in', ['queued', 'running']).execute();
          if (left.length === 0) return;
          await new Promise((r) => setTimeout(r, 2));
          continue;
        }
        for (const j of jobs) {
          const n = held.get(j.account_id)! + 1;
          held.set(j.account_id, n);
          maxSeen.set(j.account_id, Math.max(maxSeen.get(j.account_id)!, n));
        }
        const { rows } = await sql<{ account_id: string; n: number }>`
          SELECT account_id::text, count(*)::int AS n FROM submissions WHERE state = 'running' GROUP BY account_id
        `.execute(t.db);
        for (const r of rows) if (r.n > limits.get(r.account_id)!) violations.push(`${r.account_id}: ${r.n} running`);
        await new Promise((r) => setTimeout(r, Math.random() * 5));
        for (const j of jobs) {
          held.set(j.account_id, held.get(j.account_id)! - 1);
          expect(await complete(t.db, name, j.id, resultFor(j.id))).to.equal(true);
          done.push(j.id);
        }
      }
    }
    await Promise.all(['c1', 'c2', 'c3', 'c4'].map(claimer));
    expect(violations).to.deep.equal([]);
    expect(done).to.have.length(40);
    expect(new Set(done).size).to.equal(40);
    for (const [acct, limit] of limits) {
      expect(maxSeen.get(acct), `held at once for account ${acct}`).to.be.at.most(limit);
    }
    // The claimers did run jobs side by side (otherwise the test proves nothing).
    expect(Math.max(...maxSeen.values())).to.be.greaterThan(1);
  });

  it('does not claim for an account already at its limit, but claims for others', async () => {
    const busy = await makeAccount(t.db, { running: 1 });
    const other = await makeAccount(t.db, { running: 1 });
    const b1 = await enqueue(t.db, busy);
    await enqueue(t.db, busy);
    const o1 = await enqueue(t.db, other);
    const got = await claim(t.db, 'r1', 5, LEASE);
    expect(got.map((j) => j.id).sort()).to.deep.equal([b1, o1].sort());
    expect(await claim(t.db, 'r2', 5, LEASE)).to.deep.equal([]);
    await complete(t.db, 'r1', b1, resultFor(b1));
    const next = await claim(t.db, 'r2', 5, LEASE);
    expect(next).to.have.length(1);
    expect(next[0]!.account_id).to.equal(busy);
  });

  it('claims a batch in one statement, at most an account\'s free slots, and past accounts at their limit', async () => {
    const one = await makeAccount(t.db, { running: 1 });
    const other = await makeAccount(t.db, { running: 2 });
    // Enough of the limited account's jobs in front to fill the first statement's candidates.
    const front = [];
    for (let i = 0; i < 12; i++) front.push(await enqueue(t.db, one, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) }));
    const o1 = await enqueue(t.db, other, { createdAt: new Date(Date.UTC(2026, 0, 2)) });
    const o2 = await enqueue(t.db, other, { createdAt: new Date(Date.UTC(2026, 0, 3)) });
    const got = await claim(t.db, 'r1', 3, LEASE);
    expect(got.map((j) => j.id).sort()).to.deep.equal([front[0]!, o1, o2].sort());
    const running = await sql<{ id: string; running_now: number }>`SELECT id::text, running_now FROM accounts WHERE id IN (${one}, ${other}) ORDER BY id`.execute(t.db);
    expect(running.rows.map((r) => r.running_now)).to.deep.equal([1, 2]);
  });

  it('completes and claims the slot\'s next job in one statement, passing an account\'s slot on', async () => {
    const acct = await makeAccount(t.db, { running: 1 });
    const a = await enqueue(t.db, acct, { createdAt: new Date(Date.UTC(2026, 0, 1)) });
    const b = await enqueue(t.db, acct, { createdAt: new Date(Date.UTC(2026, 0, 2)) });
    const [first] = await claim(t.db, 'r1', 2, LEASE);
    expect(first!.id).to.equal(a);
    const turned = await completeAndClaim(t.db, 'r1', { id: a, attempt: first!.attempts }, resultFor(a), LEASE);
    expect(turned.completed).to.equal(true);
    expect(turned.next?.id).to.equal(b);
    expect(turned.next?.account_id).to.equal(acct);
    expect((await stateOf(t.db, a)).state).to.equal('finished');
    expect(await stateOf(t.db, b)).to.include({ state: 'running', locked_by: 'r1', attempts: 1 });
    // Nothing queued: the job is completed and nothing claimed.
    const last = await completeAndClaim(t.db, 'r1', { id: b, attempt: 1 }, resultFor(b), LEASE);
    expect(last).to.deep.equal({ completed: true, next: null, lostRace: false });
  });

  it("keeps an account within a runner's share of its slots: in a batch, one job at a time, and as a slot turns over", async () => {
    const hog = await makeAccount(t.db, { running: 5 });
    const other = await makeAccount(t.db, { running: 5 });
    const h: string[] = [];
    for (let i = 0; i < 4; i++) h.push(await enqueue(t.db, hog, { createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)) }));
    const o = await enqueue(t.db, other, { createdAt: new Date(Date.UTC(2026, 0, 2)) });
    const share = { runnerId: 'r-share', accountSlots: 2 };
    // Claims under a share take the runner's row in turn: the runners are registered first, as a daemon does.
    for (const id of ['r-share', 'r-other']) await heartbeat(t.db, { id, hostname: 'share', slots: 3, accountSlots: id === 'r-share' ? 2 : 1, launcher: 'bwrap' }, LEASE, []);
    const batch = await claim(t.db, 'r-share', 3, LEASE, share);
    // Two of the first account's, and the other account's behind them.
    expect(batch.map((j) => j.id).sort()).to.deep.equal([h[0]!, h[1]!, o].sort());
    // Another runner's share is its own.
    expect((await claim(t.db, 'r-other', 1, LEASE, { runnerId: 'r-other', accountSlots: 1 })).map((j) => j.id)).to.deep.equal([h[2]!]);
    // The other's slot turns over with no other account's job queued: the first account takes
    // it beyond its share (work-conserving) rather than leave it idle.
    const turned = await completeAndClaim(t.db, 'r-share', { id: o, attempt: 1 }, resultFor(o), LEASE, share);
    expect(turned).to.deep.include({ completed: true, lostRace: false });
    expect(turned.next?.id).to.equal(h[3]);
    for (const [id, runner] of [[h[0]!, 'r-share'], [h[1]!, 'r-share'], [h[2]!, 'r-other'], [h[3]!, 'r-share']] as const) expect(await complete(t.db, runner, { id, attempt: 1 }, resultFor(id))).to.equal(true);
  });

  it("lends an account the slots beyond its share only while no other account's run waits, marking the jobs it lends them", async () => {
    const hog = await makeAccount(t.db, { running: 10 });
    const other = await makeAccount(t.db, { running: 10 });
    await heartbeat(t.db, { id: 'r-lend', hostname: 'lend', slots: 3, accountSlots: 1, launcher: 'bwrap' }, LEASE, []);
    const share = { runnerId: 'r-lend', accountSlots: 1 };
    const at = (s: number) => ({ createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, s)), runAt: new Date(Date.UTC(2026, 0, 1, 0, 0, s)) });
    const h = [await enqueue(t.db, hog, at(0)), await enqueue(t.db, hog, at(1)), await enqueue(t.db, hog, at(2))];
    // Alone in the queue, the account takes every slot: one in its share, two lent.
    const all = await claim(t.db, 'r-lend', 3, LEASE, share);
    expect(all.map((j) => j.id)).to.deep.equal(h);
    // Queued behind the first account's next one, another account's job takes the next slot.
    const later = await enqueue(t.db, hog, at(3));
    const o = await enqueue(t.db, other, at(4));
    const turned = await completeAndClaim(t.db, 'r-lend', { id: h[0]!, attempt: 1 }, resultFor(h[0]!), LEASE, share);
    expect(turned.next?.id, "the other account's job goes first").to.equal(o);
    // A batch: the job within its account's share first, then the lent ones.
    await complete(t.db, 'r-lend', { id: h[1]!, attempt: 1 }, resultFor(h[1]!));
    await complete(t.db, 'r-lend', { id: h[2]!, attempt: 1 }, resultFor(h[2]!));
    const wait1 = await enqueue(t.db, other, at(5));
    const batch = await claim(t.db, 'r-lend', 2, LEASE, share);
    expect(batch.map((j) => j.id), "the hog's job in its share, and the other's beyond its own").to.deep.equal([later, wait1]);
    expect(batch.map((j) => j.borrowed)).to.deep.equal([false, true]);
    // A job claimed beyond its account's share is marked so (an interactive one gives the slot back when idle and someone waits).
    await complete(t.db, 'r-lend', { id: o, attempt: 1 }, resultFor(o));
    const typing = await enqueue(t.db, hog, { ...at(6), interactive: true });
    const [lent] = await claim(t.db, 'r-lend', 1, LEASE, share);
    expect(lent).to.include({ id: typing, borrowed: true });
    for (const id of [later, wait1, typing]) expect(await complete(t.db, 'r-lend', { id, attempt: 1 }, resultFor(id))).to.equal(true);
  });

  it("holds a runner's share exactly when two of its slots claim at the same instant (separate connections, claim and turn-over)", async () => {
    // Runner r-race: three slots, one account may hold one of them while another account's run waits.
    const runner = { id: 'r-race', hostname: 'race', slots: 3, accountSlots: 1, launcher: 'bwrap' };
    await heartbeat(t.db, runner, LEASE, []);
    const share = { runnerId: runner.id, accountSlots: runner.accountSlots };
    const hog = await makeAccount(t.db, { running: 10 });
    const others = [await makeAccount(t.db, { running: 10 }), await makeAccount(t.db, { running: 10 })];
    // Each slot has a connection of its own, as two runner processes' claims would.
    const slots = [connect(t.url, { max: 1, applicationName: 'runbox-test-slot-a' }), connect(t.url, { max: 1, applicationName: 'runbox-test-slot-b' })];
    const barrier = new pg.Client(clientConfig(t.url));
    await barrier.connect();
    const hogOnRunner = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM submissions WHERE locked_by = ${runner.id} AND state = 'running' AND account_id = ${hog}`.execute(t.db)).rows[0]!.n;
    // Both claims start while the hog account's row is held, so both have read the queue
    // before either can commit: the moment two slots' claims overlap.
    const together = async <T>(fire: () => Promise<T>[], held: boolean): Promise<T[]> => {
      if (!held) return Promise.all(fire());
      await barrier.query('BEGIN');
      await barrier.query('SELECT id FROM accounts WHERE id = $1 FOR UPDATE', [hog]);
      const claims = Promise.all(fire());
      // Polled from outside the barrier's transaction, which would see one snapshot of pg_stat_activity.
      while ((await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_stat_activity
               WHERE datname = current_database() AND wait_event_type = 'Lock' AND application_name LIKE 'runbox-test-slot-%'`.execute(t.db)).rows[0]!.n < 2) {
        await new Promise((r) => setTimeout(r, 5));
      }
      await barrier.query('COMMIT');
      return claims;
    };
    try {
      for (let round = 0; round < 40; round++) {
        const held = round % 2 === 0;
        for (let i = 0; i < 4; i++) await enqueue(t.db, hog);
        // Behind the hog's jobs in the queue, another account's: it waits, so the share binds.
        const waiting = [await enqueue(t.db, others[0]!), await enqueue(t.db, others[0]!)];
        // Two free slots claim at once: one takes the hog's first, the other the waiting account's.
        const claimed = (await together(() => slots.map((s) => claim(s.db, runner.id, 1, LEASE, share)), held)).flat();
        expect(await hogOnRunner(), `round ${round}: claims`).to.equal(1);
        expect(claimed.map((j) => j.id)).to.have.length(2).and.include(waiting[0]!);
        expect(claimed.map((j) => j.borrowed)).to.deep.equal([false, false]);
        // Both slots end at once, each claiming its next: again one of the hog's and the other's.
        // (Not behind the barrier: the other account's turn-over need not wait for the hog's row.)
        const turned = await together(() => claimed.map((j, i) => completeAndClaim(slots[i]!.db, runner.id, { id: j.id, attempt: j.attempts }, resultFor(j.id), LEASE, share)), false);
        expect(turned.map((r) => r.completed)).to.deep.equal([true, true]);
        expect(await hogOnRunner(), `round ${round}: turn-overs`).to.be.at.most(1);
        // A statement that lost the runner's turn to the other claimed nothing (its caller claims again).
        const nexts = turned.map((r) => r.next).filter((n) => n !== null);
        expect(nexts.length + turned.filter((r) => r.lostRace).length, `round ${round}: claimed or lost the turn`).to.equal(2);
        for (const n of nexts) await complete(t.db, runner.id, { id: n.id, attempt: n.attempts }, resultFor(n.id));
        await sql`DELETE FROM submissions WHERE state = 'queued'`.execute(t.db);
      }
      // A claim that finds nothing to pick writes nothing, the runner's row included.
      const turns = async () => (await sql<{ n: string }>`SELECT claim_turns::text AS n FROM runners WHERE id = ${runner.id}`.execute(t.db)).rows[0]!.n;
      const before = await turns();
      expect(await claim(slots[0]!.db, runner.id, 2, LEASE, share)).to.deep.equal([]);
      expect(await turns()).to.equal(before);
    } finally {
      await barrier.end();
      await Promise.all(slots.map((s) => s.close()));
    }
  });

  it('claims past jobs other claimers are taking: one job straight away, a batch by looking further down the queue', async () => {
    const acct = await makeAccount(t.db, { running: 20 });
    const held = await enqueue(t.db, acct, { createdAt: new Date(Date.UTC(2026, 0, 1)) });
    const queued: string[] = [];
    for (let i = 0; i < 10; i++) queued.push(await enqueue(t.db, acct, { createdAt: new Date(Date.UTC(2026, 0, 2, 0, 0, i)) }));
    const [first] = await claim(t.db, 'r1', 1, LEASE);
    expect(first!.id).to.equal(held);
    // Another claimer is taking the first eight queued jobs (as many as a two-job claim first looks at).
    const other = new pg.Client(clientConfig(t.url));
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT id FROM submissions WHERE id = ANY($1::uuid[]) FOR UPDATE', [queued.slice(0, 8)]);
      const turned = await completeAndClaim(t.db, 'r1', { id: held, attempt: 1 }, resultFor(held), LEASE);
      expect(turned.completed).to.equal(true);
      expect(turned.next?.id).to.equal(queued[8]);
      const batch = await claim(t.db, 'r2', 2, LEASE);
      expect(batch.map((j) => j.id)).to.deep.equal([queued[9]]);
    } finally {
      await other.query('ROLLBACK');
      await other.end();
    }
    const again = await claim(t.db, 'r2', 2, LEASE);
    expect(again.map((j) => j.id)).to.deep.equal(queued.slice(0, 2));
  });

  it('complete-and-claim by a runner that lost the job stores nothing, and claims only within limits', async () => {
    const full = await makeAccount(t.db, { running: 1 });
    const free = await makeAccount(t.db, { running: 1 });
    const held = await enqueue(t.db, full, { createdAt: new Date(Date.UTC(2026, 0, 1)) });
    await enqueue(t.db, full, { createdAt: new Date(Date.UTC(2026, 0, 2)) });
    await claim(t.db, 'owner', 1, LEASE);
    const f1 = await enqueue(t.db, free, { createdAt: new Date(Date.UTC(2026, 0, 3)) });
    // Not the holder: no result stored, no slot given back, so the full account's next job stays queued.
    const turned = await completeAndClaim(t.db, 'intruder', held, resultFor(held, 'stale\n'), LEASE);
    expect(turned.completed).to.equal(false);
    expect(turned.next?.id).to.equal(f1);
    expect(await stateOf(t.db, held)).to.include({ state: 'running', locked_by: 'owner' });
    expect(await complete(t.db, 'owner', held, resultFor(held))).to.equal(true);
    expect(await complete(t.db, 'intruder', f1, resultFor(f1))).to.equal(true);
  });

  it('completes only for the lease holder: a runner that lost its lease cannot complete', async () => {
    const acct = await makeAccount(t.db);
    const id = await enqueue(t.db, acct);
    expect((await claim(t.db, 'old', 1, LEASE)).map((j) => j.id)).to.deep.equal([id]);
    await expireLease(t.db, id);
    expect((await reapExpired(t.db)).requeued).to.deep.equal([id]);
    const again = await claim(t.db, 'new', 1, LEASE);
    expect(again.map((j) => j.id)).to.deep.equal([id]);
    expect(again[0]!.attempts).to.equal(2);

    expect(await complete(t.db, 'old', id, resultFor(id, 'stale\n'))).to.equal(false);
    expect(await fail(t.db, 'old', id, 'stale', { refund: true })).to.equal(false);
    expect(await release(t.db, 'old', id)).to.equal(false);
    expect((await stateOf(t.db, id)).state).to.equal('running');

    expect(await complete(t.db, 'new', id, resultFor(id, 'fresh\n'))).to.equal(true);
    const row = await stateOf(t.db, id);
    expect(row.state).to.equal('finished');
    expect((row.result as RunResult).output).to.equal('fresh\n');
    expect(row.lease_expires_at).to.equal(null);
    expect(row.finished_at).to.be.instanceOf(Date);
    // A finished job cannot be completed twice either.
    expect(await complete(t.db, 'new', id, resultFor(id, 'twice\n'))).to.equal(false);
  });

  it('tells apart two claims of one job by the same runner: a stale run cannot act for the newer claim', async () => {
    const acct = await makeAccount(t.db);
    const id = await enqueue(t.db, acct);
    await claim(t.db, 'r1', 1, LEASE);
    await expireLease(t.db, id);
    await reapExpired(t.db);
    const [again] = await claim(t.db, 'r1', 1, LEASE);
    expect(again!.attempts).to.equal(2);
    expect(await complete(t.db, 'r1', { id, attempt: 1 }, resultFor(id, 'stale\n'))).to.equal(false);
    expect(await fail(t.db, 'r1', { id, attempt: 1 }, 'stale', { refund: true })).to.equal(false);
    expect(await release(t.db, 'r1', { id, attempt: 1 })).to.equal(false);
    expect(await complete(t.db, 'r1', { id, attempt: 2 }, resultFor(id, 'fresh\n'))).to.equal(true);
    expect(((await stateOf(t.db, id)).result as RunResult).output).to.equal('fresh\n');
  });

  it('requeues an expired lease while attempts remain, then fails and refunds it once', async () => {
    const acct = await makeAccount(t.db);
    const key = await makeKey(t.db, acct);
    const id = await enqueue(t.db, acct, { keyId: key, units: 3, maxAttempts: 2, billed: true });
    expect(await accountUsage(t.db, acct)).to.equal(3);
    expect(await keyUsage(t.db, key)).to.equal(3);

    await claim(t.db, 'r1', 1, LEASE);
    await expireLease(t.db, id);
    expect(await reapExpired(t.db)).to.deep.equal({ requeued: [id], failed: [] });
    let row = await stateOf(t.db, id);
    expect(row.state).to.equal('queued');
    expect(row.locked_by).to.equal(null);
    expect(row.refunded).to.equal(false);
    expect(await accountUsage(t.db, acct)).to.equal(3);

    await claim(t.db, 'r2', 1, LEASE);
    await expireLease(t.db, id);
    expect(await reapExpired(t.db)).to.deep.equal({ requeued: [], failed: [id] });
    row = await stateOf(t.db, id);
    expect(row.state).to.equal('failed');
    expect(row.refunded).to.equal(true);
    expect(row.attempts).to.equal(2);
    expect(await accountUsage(t.db, acct)).to.equal(0);
    expect(await keyUsage(t.db, key)).to.equal(0);

    // Reaping again finds nothing and refunds nothing.
    expect(await reapExpired(t.db)).to.deep.equal({ requeued: [], failed: [] });
    expect(await accountUsage(t.db, acct)).to.equal(0);
  });

  it('leaves live leases alone and is safe to run from many runners at once', async () => {
    const acct = await makeAccount(t.db, { running: 50 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await enqueue(t.db, acct, { billed: true }));
    const live = await enqueue(t.db, acct);
    await claim(t.db, 'dead', 21, LEASE);
    for (const id of ids) await expireLease(t.db, id);
    const results = await Promise.all(Array.from({ length: 6 }, () => reapExpired(t.db)));
    const requeued = results.flatMap((r) => r.requeued);
    expect(requeued.sort()).to.deep.equal([...ids].sort());
    expect((await stateOf(t.db, live)).state).to.equal('running');
    expect(await accountUsage(t.db, acct)).to.equal(20);
  });

  it('refunds a failed job exactly once, and only when asked', async () => {
    const acct = await makeAccount(t.db, { running: 5 });
    const key = await makeKey(t.db, acct);
    const refunded = await enqueue(t.db, acct, { keyId: key, units: 2, billed: true });
    const kept = await enqueue(t.db, acct, { keyId: key, units: 1, billed: true });
    expect(await accountUsage(t.db, acct)).to.equal(3);
    await claim(t.db, 'r1', 2, LEASE);

    expect(await fail(t.db, 'r1', refunded, 'image missing', { refund: true })).to.equal(true);
    expect(await fail(t.db, 'r1', refunded, 'image missing', { refund: true })).to.equal(false);
    expect(await fail(t.db, 'r1', kept, 'lost', { refund: false })).to.equal(true);

    expect(await accountUsage(t.db, acct)).to.equal(1);
    expect(await keyUsage(t.db, key)).to.equal(1);
    const a = await stateOf(t.db, refunded);
    expect(a.state).to.equal('failed');
    expect(a.refunded).to.equal(true);
    expect(a.last_error).to.equal('image missing');
    const b = await stateOf(t.db, kept);
    expect(b.refunded).to.equal(false);
    expect(await reapExpired(t.db)).to.deep.equal({ requeued: [], failed: [] });
    expect(await accountUsage(t.db, acct)).to.equal(1);
  });

  it('releases a job back to the queue with its attempt taken back', async () => {
    const acct = await makeAccount(t.db);
    const id = await enqueue(t.db, acct);
    await claim(t.db, 'r1', 1, LEASE);
    expect(await release(t.db, 'r1', id)).to.equal(true);
    const row = await stateOf(t.db, id);
    expect(row.state).to.equal('queued');
    expect(row.attempts).to.equal(0);
    expect(row.locked_by).to.equal(null);
    expect((await claim(t.db, 'r2', 1, LEASE)).map((j) => j.id)).to.deep.equal([id]);
  });

  it('heart-beats: extends the leases it holds, records the runner, reports what it still holds', async () => {
    const acct = await makeAccount(t.db, { running: 5 });
    const mine = await enqueue(t.db, acct);
    const lost = await enqueue(t.db, acct);
    await claim(t.db, 'hb', 2, LEASE);
    await expireLease(t.db, mine);
    await expireLease(t.db, lost);
    await reapExpired(t.db); // both requeued
    await claim(t.db, 'hb', 1, LEASE); // takes one of them back
    const [held] = (await t.db.selectFrom('submissions').select('id').where('locked_by', '=', 'hb').where('state', '=', 'running').execute()).map((r) => r.id);
    await expireLease(t.db, held!);
    const ids = await heartbeat(t.db, { id: 'hb', hostname: 'host-1', slots: 4, launcher: 'bwrap' }, LEASE);
    expect(ids).to.deep.equal([{ id: held, attempt: 2 }]);
    expect((await stateOf(t.db, held!)).lease_expires_at!.getTime()).to.be.greaterThan(Date.now());
    const runner = await t.db.selectFrom('runners').selectAll().where('id', '=', 'hb').executeTakeFirstOrThrow();
    expect(runner).to.include({ hostname: 'host-1', slots: 4, launcher: 'bwrap', stopped_at: null });
    await heartbeat(t.db, { id: 'hb', hostname: 'host-2', slots: 8, launcher: 'nsjail' }, LEASE);
    const again = await t.db.selectFrom('runners').selectAll().where('id', '=', 'hb').executeTakeFirstOrThrow();
    expect(again).to.include({ hostname: 'host-2', slots: 8, launcher: 'nsjail' });
    expect(again.last_seen.getTime()).to.be.at.least(runner.last_seen.getTime());
  });

  describe('waker', () => {
    it('wakes a waiting claimer on NOTIFY (not by polling)', async () => {
      const waker = createWaker({ url: t.url, pollMs: 600_000 });
      try {
        await waker.ready();
        expect(waker.listening).to.equal(true);
        const acct = await makeAccount(t.db);
        const woken = waker.wait();
        // Admission inserts and notifies in one transaction.
        await t.db.transaction().execute(async (trx) => {
          await enqueue(trx, acct);
          await sql`SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(trx);
        });
        expect(await woken).to.equal('notify');
        expect(await claim(t.db, 'r1', 1, LEASE)).to.have.length(1);
      } finally {
        await waker.close();
      }
    });

    it('remembers a notification that arrives while nobody waits', async () => {
      const waker = createWaker({ url: t.url, pollMs: 600_000 });
      try {
        await waker.ready();
        await sql`SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(t.db);
        // A round trip on the waker's own channel orders us after the first notification.
        const probe = new pg.Client(clientConfig(t.url));
        await probe.connect();
        await probe.query(`SELECT pg_notify('${JOBS_CHANNEL}', '')`);
        await probe.end();
        expect(await waker.wait()).to.equal('notify');
      } finally {
        await waker.close();
      }
    });

    it('falls back to polling', async () => {
      const waker = createWaker({ url: t.url, pollMs: 50 });
      try {
        expect(await waker.wait()).to.equal('poll');
      } finally {
        await waker.close();
      }
    });

    it('reconnects after its connection is killed and hears notifications again', async () => {
      let connects = 0;
      const errors: Error[] = [];
      const waker = createWaker({
        url: t.url,
        pollMs: 600_000,
        reconnectMinMs: 20,
        onConnected: () => connects++,
        onError: (e) => errors.push(e),
      });
      try {
        await waker.ready();
        expect(connects).to.equal(1);
        await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE application_name = 'runbox-listen' AND datname = current_database()`.execute(t.db);
        // The lost connection itself wakes the claimer (jobs may have arrived meanwhile).
        expect(await waker.wait()).to.equal('poll');
        while (connects < 2) await new Promise((r) => setTimeout(r, 20));
        expect(waker.listening).to.equal(true);
        expect(errors.length).to.be.greaterThan(0);
        const woken = waker.wait();
        await sql`SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(t.db);
        expect(await woken).to.equal('notify');
      } finally {
        await waker.close();
      }
    });

    it('close() wakes the waiter', async () => {
      const waker = createWaker({ url: t.url, pollMs: 600_000 });
      const woken = waker.wait();
      await waker.close();
      expect(await woken).to.equal('closed');
    });
  });

  describe('done watcher', () => {
    it('resolves a waiter when its job finishes, by notification (not polling)', async () => {
      const watcher = createDoneWatcher({ url: t.url, db: t.db, pollMs: 600_000 });
      try {
        await watcher.ready();
        const acct = await makeAccount(t.db);
        const id = await enqueue(t.db, acct, { mode: 'sync' });
        const waiting = watcher.waitFor(id);
        await claim(t.db, 'r1', 1, LEASE);
        let settled = false;
        void waiting.then(() => (settled = true));
        // Still running: the waiter must not have been released.
        await new Promise((r) => setTimeout(r, 50));
        expect(settled).to.equal(false);
        await complete(t.db, 'r1', id, resultFor(id));
        expect(await waiting).to.equal('finished');
      } finally {
        await watcher.close();
      }
    });

    it('notifies the ends of live modes only: an async job finishes without a NOTIFY', async () => {
      // Postgres serialises every notifying commit, so async runs (polled or called back) are not announced.
      const listener = new pg.Client(clientConfig(t.url));
      await listener.connect();
      try {
        const heard: string[] = [];
        // id:state (a finished run's result may follow: it is checked on its own below).
        listener.on('notification', (n) => heard.push((n.payload ?? '').split(':').slice(0, 2).join(':')));
        await listener.query(`LISTEN ${DONE_CHANNEL}`);
        const acct = await makeAccount(t.db, { running: 4 });
        const ids: Record<string, string> = {};
        for (const mode of ['async', 'sync', 'ws', 'piston', 'judge0'] as const) ids[mode] = await enqueue(t.db, acct, { mode });
        expect(await claim(t.db, 'r1', 4, LEASE)).to.have.length(4);
        // complete() for the first four, completeAndClaim() for the fifth: both statements choose alike.
        for (const mode of ['async', 'sync', 'ws', 'piston'] as const) {
          const id = ids[mode]!;
          if (mode === 'piston') {
            const { completed, next } = await completeAndClaim(t.db, 'r1', id, resultFor(id), LEASE);
            expect(completed).to.equal(true);
            expect(next?.id).to.equal(ids['judge0']);
          } else {
            expect(await complete(t.db, 'r1', id, resultFor(id))).to.equal(true);
          }
        }
        const last = ids['judge0']!;
        expect(await complete(t.db, 'r1', last, resultFor(last))).to.equal(true);
        // Notifications are delivered in commit order: the last one heard means none is still on its way.
        const deadline = Date.now() + 5000;
        while (!heard.includes(`${last}:finished`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        expect(heard).to.deep.equal(['sync', 'ws', 'piston', 'judge0'].map((m) => `${ids[m]}:finished`));
        expect((await stateOf(t.db, ids['async']!)).state).to.equal('finished');
      } finally {
        await listener.end();
      }
    });

    it('hands a waiter the result its notification carried, once; a result too large to notify is left to a look-up', async () => {
      const watcher = createDoneWatcher({ url: t.url, db: t.db, pollMs: 600_000 });
      try {
        await watcher.ready();
        const acct = await makeAccount(t.db, { running: 2 });
        const small = await enqueue(t.db, acct, { mode: 'sync' });
        const large = await enqueue(t.db, acct, { mode: 'sync' });
        await sql`UPDATE submissions SET extra_params = '{"b": 1.50, "a": [1]}'::json WHERE id = ${small}`.execute(t.db);
        const waiting = [watcher.waitFor(small), watcher.waitFor(large)];
        expect(await claim(t.db, 'r1', 2, LEASE)).to.have.length(2);
        const smallResult = resultFor(small);
        const largeResult = resultFor(large, 'x'.repeat(9000));
        expect(await complete(t.db, 'r1', small, smallResult)).to.equal(true);
        expect(await complete(t.db, 'r1', large, largeResult)).to.equal(true);
        expect(await Promise.all(waiting)).to.deep.equal(['finished', 'finished']);
        // extra_params as stored (json keeps the text as sent), the result as the runner stored it.
        expect(watcher.takeResult(small)).to.deep.equal({ result: smallResult, extraParamsJson: '{"b": 1.50, "a": [1]}' });
        expect(watcher.takeResult(small)).to.equal(undefined);
        expect(watcher.takeResult(large)).to.equal(undefined);
      } finally {
        await watcher.close();
      }
    });

    it('resolves at once for a job that already ended, and reports failures', async () => {
      const watcher = createDoneWatcher({ url: t.url, db: t.db, pollMs: 600_000 });
      try {
        const acct = await makeAccount(t.db);
        const id = await enqueue(t.db, acct);
        await claim(t.db, 'r1', 1, LEASE);
        await fail(t.db, 'r1', id, 'could not start', { refund: true });
        const [a, b] = await Promise.all([watcher.waitFor(id), watcher.waitFor(id)]);
        expect([a, b]).to.deep.equal(['failed', 'failed']);
      } finally {
        await watcher.close();
      }
    });

    it('stops waiting on abort', async () => {
      const watcher = createDoneWatcher({ url: t.url, db: t.db, pollMs: 600_000 });
      try {
        const acct = await makeAccount(t.db);
        const id = await enqueue(t.db, acct);
        const ac = new AbortController();
        const waiting = watcher.waitFor(id, ac.signal);
        ac.abort(new Error('client went away'));
        let caught: unknown;
        await waiting.catch((e: unknown) => (caught = e));
        expect((caught as Error).message).to.equal('client went away');
      } finally {
        await watcher.close();
      }
    });
  });
});
