import { expect } from 'chai';
import { sql } from 'kysely';
import pg from 'pg';
import { clientConfig } from '../../src/db/url.js';
import { claim, completeAndClaim, heartbeat, JOBS_CHANNEL, registerWakes, wakeChannelOf } from '../../src/queue/index.js';
import { admitSubmission } from '../../src/quota/admit.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Processes, until, waitForLog } from '../helpers/processes.js';
import { enqueue, expectNoDrift, makeAccount, waitForStates } from '../helpers/queue-rows.js';
import { skipUnlessRealRuns } from '../helpers/results-stack.js';
import { successResult } from '../helpers/run-result.js';
import { TEST_SLOT_BASE } from '../helpers/sandbox.js';

// An admission wakes one runner host: it takes a wake token of one runner waiting with a
// free slot and notifies that runner's own channel, or notifies runbox_jobs (every
// runner) when no token can be taken. Tokens are kept at the free slots by the runners'
// own claim statements. A woken runner that died leaves its job to the others' polls.

const LEASE = 60;
const procs = new Processes();

/** Notifications heard per channel, on a connection of its own. */
async function hear(url: string, channels: string[]): Promise<{ counts: Map<string, number>; close: () => Promise<void> }> {
  const c = new pg.Client(clientConfig(url));
  await c.connect();
  const counts = new Map(channels.map((ch) => [ch, 0]));
  c.on('notification', (m) => counts.set(m.channel, (counts.get(m.channel) ?? 0) + 1));
  for (const ch of channels) await c.query(`LISTEN ${c.escapeIdentifier(ch)}`);
  return { counts, close: () => c.end() };
}

describe('waking one runner per admission', function () {
  this.timeout(120_000);
  let t: TestDatabase;
  before(async () => {
    t = await freshDatabase('wake_one');
  });
  after(async () => {
    await procs.stopAll();
    await t?.drop();
  });
  afterEach(async function () {
    if (this.currentTest?.state === 'failed') console.log(procs.tails());
    await procs.stopAll();
    await sql`DELETE FROM submissions`.execute(t.db);
    await sql`DELETE FROM runner_wakes`.execute(t.db);
    await sql`UPDATE accounts SET running_now = 0`.execute(t.db);
  });

  const tokensOf = async (runner: string) =>
    (await sql<{ slots: number }>`SELECT slots FROM runner_wakes WHERE runner_id = ${runner}`.execute(t.db)).rows[0]?.slots;
  const admit = (account: string) =>
    admitSubmission(t.db, { accountId: account, keyId: null, compiler: 'python-3.9.7', code: 'print(1)\n', input: null, tests: null, extraParams: null, maxAttempts: 3, now: new Date() });
  const settle = () => new Promise((r) => setTimeout(r, 200));

  it('takes one token per admitted run and notifies only that runner; with none to take, or the only one being written, every runner', async () => {
    const account = await makeAccount(t.db, { running: 50 });
    const ids = ['w-a', 'w-b', 'w-c'];
    for (const id of ids) await registerWakes(t.db, id);
    await sql`UPDATE runner_wakes SET slots = CASE runner_id WHEN 'w-a' THEN 2 WHEN 'w-b' THEN 1 ELSE 0 END`.execute(t.db);
    const ear = await hear(t.url, [...ids.map(wakeChannelOf), JOBS_CHANNEL]);
    try {
      for (let i = 0; i < 4; i++) expect((await admit(account)).admitted).to.equal(true);
      await settle();
      const heard = Object.fromEntries([...ear.counts].map(([ch, n]) => [ch === JOBS_CHANNEL ? 'all' : ids[ids.map(wakeChannelOf).indexOf(ch)]!, n]));
      // Three tokens, three runners woken one each time; the fourth run wakes every runner.
      expect(heard).to.deep.equal({ 'w-a': 2, 'w-b': 1, 'w-c': 0, all: 1 });
      for (const id of ids) expect(await tokensOf(id)).to.equal(0);

      // A token row being written by its runner's claim is skipped, never waited for.
      await sql`UPDATE runner_wakes SET slots = 1 WHERE runner_id = 'w-a'`.execute(t.db);
      const claimer = new pg.Client(clientConfig(t.url));
      await claimer.connect();
      try {
        await claimer.query('BEGIN');
        await claimer.query(`SELECT 1 FROM runner_wakes WHERE runner_id = 'w-a' FOR UPDATE`);
        expect((await admit(account)).admitted).to.equal(true);
        await claimer.query('COMMIT');
      } finally {
        await claimer.end();
      }
      await settle();
      expect(ear.counts.get(JOBS_CHANNEL)).to.equal(2);
      expect(ear.counts.get(wakeChannelOf('w-a'))).to.equal(2);
      expect(await tokensOf('w-a')).to.equal(1);
    } finally {
      await ear.close();
    }
  });

  it("a runner's claim statements keep its tokens at its free slots, and an empty claim that changes nothing writes nothing", async () => {
    const account = await makeAccount(t.db, { running: 10 });
    await heartbeat(t.db, { id: 'w-claim', hostname: 'w', slots: 3, accountSlots: 3, launcher: 'bwrap' }, LEASE, []);
    await registerWakes(t.db, 'w-claim');
    const job = await enqueue(t.db, account);
    const wake = (freeBesides: number) => ({ runnerId: 'w-claim', freeBesides });
    // Three slots asked, one job claimed: two free.
    const [got] = await claim(t.db, 'w-claim', 3, LEASE, undefined, wake(0));
    expect(got!.id).to.equal(job);
    expect(await tokensOf('w-claim')).to.equal(2);
    // Its slot turns over with nothing queued: three free.
    const turned = await completeAndClaim(t.db, 'w-claim', { id: job, attempt: 1 }, successResult(job), LEASE, undefined, wake(2));
    expect(turned).to.deep.include({ completed: true, next: null });
    expect(await tokensOf('w-claim')).to.equal(3);
    const version = async () => (await sql<{ x: string }>`SELECT xmin::text AS x FROM runner_wakes WHERE runner_id = 'w-claim'`.execute(t.db)).rows[0]!.x;
    const before = await version();
    expect(await claim(t.db, 'w-claim', 3, LEASE, undefined, wake(0))).to.deep.equal([]);
    expect(await version()).to.equal(before);
    await expectNoDrift(t.db);
  });

  it('runner daemons hold tokens while they wait, each admission wakes one, and a woken runner that died leaves its job to a live runner polling', async function () {
    skipUnlessRealRuns(this, ['python3.9']);
    const account = await makeAccount(t.db, { running: 10 });
    const runner = (id: string, uidBase: number) =>
      procs.launch(id, 'runner.js', {
        RUNBOX_DATABASE_URL: t.url,
        RUNBOX_RUNNER_ID: id,
        RUNBOX_RUNNER_SLOTS: '1',
        RUNBOX_POLL_MS: '1000',
        RUNBOX_SANDBOX_UID_BASE: String(uidBase),
      });
    const uid = 61000 + TEST_SLOT_BASE;
    const doomed = runner('wake-doomed', uid + 10);
    const live = runner('wake-live', uid + 20);
    await Promise.all([waitForLog(doomed, /runner started/), waitForLog(live, /runner started/)]);
    await until('both runners wait with a token', async () => (await tokensOf('wake-doomed')) === 1 && (await tokensOf('wake-live')) === 1);

    // One admission, one runner woken: the run is done and the tokens are back.
    const first = await admit(account);
    if (!first.admitted) throw new Error(first.message);
    await waitForStates(t.db, [first.id], ['finished']);
    await until('both runners wait with a token again', async () => (await tokensOf('wake-doomed')) === 1 && (await tokensOf('wake-live')) === 1);

    // The next admission's wake goes to a runner that is gone (its row still says it waits).
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    await sql`UPDATE runner_wakes SET woken_at = CASE runner_id WHEN 'wake-doomed' THEN timestamptz '2000-01-01' ELSE now() END`.execute(t.db);
    const second = await admit(account);
    if (!second.admitted) throw new Error(second.message);
    expect(await tokensOf('wake-doomed'), "the dead runner's token was taken").to.equal(0);
    expect(await tokensOf('wake-live'), "the live runner's token was not").to.equal(1);
    // The live runner's poll finds it.
    await waitForStates(t.db, [second.id], ['finished']);
    const row = await t.db.selectFrom('submissions').select(['locked_by', 'attempts']).where('id', '=', second.id).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ locked_by: 'wake-live', attempts: 1 });
    // The dead runner holds no token any more: the next admission wakes the live one.
    const third = await admit(account);
    if (!third.admitted) throw new Error(third.message);
    await waitForStates(t.db, [third.id], ['finished']);
    expect((await t.db.selectFrom('submissions').select('locked_by').where('id', '=', third.id).executeTakeFirstOrThrow()).locked_by).to.equal('wake-live');
    await expectNoDrift(t.db);
  });
});
