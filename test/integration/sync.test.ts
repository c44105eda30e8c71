import { expect } from 'chai';
import { sql } from 'kysely';
import type { RunResult } from '../../src/result.js';
import { keyFor, postJson, realRunsUnavailable, resultsStack, type ResultsStack } from '../helpers/results-stack.js';
import { waitForStates } from '../helpers/queue-rows.js';

// POST /api/v2/run-code-sync/ end to end: real API, real runner, real sandbox.

const PY = 'python-3.9.7';
const sleeper = (seconds: number) => `import time\ntime.sleep(${seconds})\nprint("slept")\n`;

async function runningNow(s: ResultsStack): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT coalesce(sum(running_now), 0)::int AS n FROM accounts`.execute(s.db.db);
  return rows[0]!.n;
}

async function untilRunning(s: ResultsStack, accountId: string, n: number): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM submissions WHERE account_id = ${accountId} AND state = 'running'`.execute(s.db.db);
    if (rows[0]!.n >= n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe('synchronous runs', function () {
  let s: ResultsStack;
  const sync = (key: string, body: unknown, signal?: AbortSignal) => postJson(`${s.url}/api/v2/run-code-sync/`, key, body, signal);

  before(async function () {
    const why = realRunsUnavailable(['python3.9']);
    if (why) {
      console.log(`      SKIPPED: ${why}`);
      this.skip();
    }
    s = await resultsStack('sync', { RUNBOX_RUNNER_SLOTS: '3' });
  });
  after(async () => s?.close());

  it('429 capacity when no runner is heart-beating, and nothing is counted', async () => {
    const { accountId, key } = await keyFor(s.db);
    const res = await sync(key.key, { code: 'print(1)', compiler: PY });
    expect(res.status).to.equal(429);
    expect(await errorCode(res)).to.equal('capacity');
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(rows).to.have.length(0);
    await s.startRunner();
  });

  it('answers 200 with the result, counted like any run', async () => {
    const { accountId, key } = await keyFor(s.db);
    const res = await sync(key.key, { code: 'print(input()[::-1])', input: 'olleh\n', compiler: PY, extra_params: { ref: 'a1' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    const result = (await res.json()) as RunResult;
    expect(result).to.include({ status: 'success', output: 'hello\n', exit_code: 0, compiler: PY, truncated: false });
    expect(result.extra_params).to.deep.equal({ ref: 'a1' });
    expect(result.id).to.equal(res.headers.get('x-submission-id'));
    const usage = await s.db.db.selectFrom('account_usage').select('submissions').where('account_id', '=', accountId).executeTakeFirstOrThrow();
    expect(usage.submissions).to.equal(1);
    const row = await s.db.db.selectFrom('submissions').select(['mode', 'state']).where('id', '=', result.id).executeTakeFirstOrThrow();
    expect(row).to.deep.equal({ mode: 'sync', state: 'finished' });
  });

  it("429 too_many_running when the account's slots are taken: exact under concurrent requests", async () => {
    const { accountId, key } = await keyFor(s.db, { limits: { running: 2 } });
    const answers = await Promise.all(Array.from({ length: 6 }, () => sync(key.key, { code: sleeper(1.5), compiler: PY })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).to.deep.equal([200, 200, 429, 429, 429, 429]);
    for (const r of answers.filter((a) => a.status === 429)) expect(await errorCode(r)).to.equal('too_many_running');
    for (const r of answers.filter((a) => a.status === 200)) expect(((await r.json()) as RunResult).output).to.equal('slept\n');
    const stored = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).execute();
    expect(stored).to.have.length(2);
  });

  it('429 too_many_running while a synchronous run of the account is still queued', async () => {
    // A runner host that is registered but has not claimed anything yet: the first run
    // stays queued. Queued but not running, it still holds the account's next slot.
    await s.runner!.stop();
    await sql`INSERT INTO runners (id, hostname, slots, launcher) VALUES ('idle-host', 'idle', 2, 'bwrap')`.execute(s.db.db);
    const { accountId, key } = await keyFor(s.db, { limits: { running: 1 } });
    const first = sync(key.key, { code: 'print(1)', compiler: PY });
    const [id] = await idsOf(s, accountId, 1);
    expect((await s.db.db.selectFrom('submissions').select('state').where('id', '=', id!).executeTakeFirstOrThrow()).state).to.equal('queued');
    const second = await sync(key.key, { code: 'print(2)', compiler: PY });
    expect(second.status).to.equal(429);
    expect(await errorCode(second)).to.equal('too_many_running');
    // Another account still has a slot, and the service one more.
    const other = await keyFor(s.db);
    const third = sync(other.key.key, { code: 'print(3)', compiler: PY });
    await idsOf(s, other.accountId, 1);
    await sql`DELETE FROM runners WHERE id = 'idle-host'`.execute(s.db.db);
    s.runner = await s.startRunner();
    expect((await first).status).to.equal(200);
    expect((await third).status).to.equal(200);
  });

  it('429 capacity when every runner slot of the service is busy', async () => {
    // Two accounts fill the three slots: one account takes at most two (a slot is kept for others).
    const busy = await keyFor(s.db, { limits: { running: 5 } });
    const more = await keyFor(s.db, { limits: { running: 5 } });
    const post = (key: string) => postJson(`${s.url}/api/v2/run-code/`, key, { code: sleeper(2), compiler: PY });
    for (const j of await Promise.all([post(busy.key.key), post(busy.key.key), post(more.key.key)])) expect(j.status).to.equal(200);
    await untilRunning(s, busy.accountId, 2);
    await untilRunning(s, more.accountId, 1);
    const other = await keyFor(s.db);
    const res = await sync(other.key.key, { code: 'print(1)', compiler: PY });
    expect(res.status).to.equal(429);
    expect(await errorCode(res)).to.equal('capacity');
    await waitForStates(s.db.db, [...(await idsOf(s, busy.accountId, 2)), ...(await idsOf(s, more.accountId, 1))], ['finished']);
  });

  it("one account takes every free slot while no other account's run waits; another account's run is still admitted and served", async () => {
    // A course on one account: its students' runs use the whole runner.
    const hog = await keyFor(s.db, { limits: { running: 5 } });
    const post = (key: string) => postJson(`${s.url}/api/v2/run-code/`, key, { code: sleeper(2), compiler: PY });
    for (const j of await Promise.all([post(hog.key.key), post(hog.key.key), post(hog.key.key), post(hog.key.key)])) expect(j.status).to.equal(200);
    await untilRunning(s, hog.accountId, 3);
    // Every slot is its own: its synchronous run finds none free.
    const again = await sync(hog.key.key, { code: 'print(1)', compiler: PY });
    expect(again.status).to.equal(429);
    expect(await errorCode(again)).to.equal('capacity');
    // The slot lent beyond its share goes to another account's run when it frees, before the first's fourth.
    const other = await keyFor(s.db);
    const res = await sync(other.key.key, { code: 'print("other")', compiler: PY });
    expect(res.status).to.equal(200);
    expect(((await res.json()) as RunResult).output).to.equal('other\n');
    await waitForStates(s.db.db, await idsOf(s, hog.accountId, 4), ['finished']);
  });

  it("three runs of one account at the same moment on a runner of three slots all run (the slot kept for others is lent while nobody else waits)", async () => {
    const { key } = await keyFor(s.db, { limits: { running: 3 } });
    const answers = await Promise.all([1, 2, 3].map((i) => sync(key.key, { code: `print(${i})`, compiler: PY })));
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    expect(await Promise.all(answers.map(async (r) => ((await r.json()) as RunResult).output))).to.deep.equal(['1\n', '2\n', '3\n']);
  });

  it('a client that goes away stops its run: cancelled, counted, and the slot is free again', async () => {
    const { accountId, key } = await keyFor(s.db, { limits: { running: 1 } });
    const abort = new AbortController();
    const pending = sync(key.key, { code: 'while True: pass\n', compiler: PY }, abort.signal).catch((err: Error) => err);
    await untilRunning(s, accountId, 1);
    abort.abort();
    expect(await pending).to.be.an.instanceOf(Error);
    const [id] = await idsOf(s, accountId, 1);
    await waitForStates(s.db.db, [id!], ['finished']);
    const row = await s.db.db.selectFrom('submissions').select(['result', 'cancelled_at', 'refunded']).where('id', '=', id!).executeTakeFirstOrThrow();
    // Stopped, not run to its 30 s timeout.
    expect((row.result as RunResult).status).to.equal('cancelled');
    expect(row.cancelled_at).to.not.equal(null);
    expect(row.refunded).to.equal(false);
    expect(await runningNow(s)).to.equal(0);
    const usage = await s.db.db.selectFrom('account_usage').select('submissions').where('account_id', '=', accountId).executeTakeFirstOrThrow();
    expect(usage.submissions).to.equal(1);
    // The account's only slot is free again.
    const again = await sync(key.key, { code: 'print("again")', compiler: PY });
    expect(again.status).to.equal(200);
    expect(((await again.json()) as RunResult).output).to.equal('again\n');
  });

  it('a client that goes away while its run is still queued withdraws it, refunded', async () => {
    await s.runner!.stop();
    await sql`INSERT INTO runners (id, hostname, slots, launcher) VALUES ('idle-host-2', 'idle', 2, 'bwrap')`.execute(s.db.db);
    try {
      const { accountId, key } = await keyFor(s.db);
      const abort = new AbortController();
      const pending = sync(key.key, { code: 'print(1)', compiler: PY }, abort.signal).catch((err: Error) => err);
      const [id] = await idsOf(s, accountId, 1);
      abort.abort();
      expect(await pending).to.be.an.instanceOf(Error);
      await waitForStates(s.db.db, [id!], ['failed']);
      const row = await s.db.db.selectFrom('submissions').select(['result', 'refunded']).where('id', '=', id!).executeTakeFirstOrThrow();
      expect((row.result as RunResult).status).to.equal('cancelled');
      expect(row.refunded).to.equal(true);
      const usage = await s.db.db.selectFrom('account_usage').select('submissions').where('account_id', '=', accountId).executeTakeFirstOrThrow();
      expect(usage.submissions).to.equal(0);
    } finally {
      await sql`DELETE FROM runners WHERE id = 'idle-host-2'`.execute(s.db.db);
      s.runner = await s.startRunner();
    }
  });
});

async function idsOf(s: ResultsStack, accountId: string, n: number): Promise<string[]> {
  for (;;) {
    const rows = await s.db.db.selectFrom('submissions').select('id').where('account_id', '=', accountId).orderBy('created_at').execute();
    if (rows.length >= n) return rows.map((r) => r.id);
    await new Promise((r) => setTimeout(r, 20));
  }
}
