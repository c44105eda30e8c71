import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { publishInput, pruneInput, storedInput } from '../../src/queue/input-channel.js';
import { REQUEST_LIMITS } from '../../src/limits.js';
import { watchInput, type InputFeeds } from '../../src/runner/input-feeds.js';
import { RunInput, StdinPace } from '../../src/api/ws/run-input.js';
import { connect } from '../../src/db/connect.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// The runner's stdin feeds against a real Postgres: what the API side stores and
// notifies reaches the feed once, in order, whether it was sent before the program
// started, out of order, or twice; the end marker and the input limit close stdin.

/** A feed attached like the sandbox attaches one: records writes and the end. */
function attach(feeds: InputFeeds, id: string, upfrontBytes = 0) {
  const got = { text: '', ended: false, wrote: 0 };
  let wake: () => void = () => {};
  const detach = feeds.feed(id, upfrontBytes).attach(
    (b) => {
      got.text += b.toString('utf8');
      got.wrote++;
      wake();
    },
    () => {
      got.ended = true;
      wake();
    },
  );
  const until = async (pred: () => boolean) => {
    while (!pred()) await new Promise<void>((r) => (wake = r));
  };
  return { got, detach, until };
}

describe('interactive input through Postgres (runner side)', function () {
  this.timeout(20_000);
  let t: TestDatabase;
  let feeds: InputFeeds;
  before(async () => {
    t = await freshDatabase('inputfeeds');
    feeds = watchInput({ url: t.url, db: t.db });
    // The listener is in place once its backend shows up.
    for (;;) {
      const { rows } = await t.pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'runbox-listen'`);
      if (rows.length > 0) break;
      await new Promise((r) => setTimeout(r, 20));
    }
  });
  after(async () => {
    await feeds?.close();
    await t?.drop();
  });

  it('input stored before the program started comes first, then live input, each chunk once, in order', async () => {
    const id = randomUUID();
    await publishInput(t.db, { i: id, n: 0, d: 'early\n' });
    const f = attach(feeds, id);
    await f.until(() => f.got.text === 'early\n');
    // Out of order and repeated: put back in order, written once.
    await publishInput(t.db, { i: id, n: 2, d: 'third\n' });
    await publishInput(t.db, { i: id, n: 1, d: 'second\n' });
    await publishInput(t.db, { i: id, n: 1, d: 'second\n' });
    await publishInput(t.db, { i: id, n: 3, eof: true });
    await f.until(() => f.got.ended);
    expect(f.got.text).to.equal('early\nsecond\nthird\n');
    expect(f.got.wrote).to.equal(3);
    f.detach();
  });

  it('input beyond the limit, counting the input written up front, closes stdin instead of being written', async () => {
    const id = randomUUID();
    const f = attach(feeds, id, REQUEST_LIMITS.inputMaxBytes - 3);
    await publishInput(t.db, { i: id, n: 0, d: 'ab\n' });
    await publishInput(t.db, { i: id, n: 1, d: 'c' });
    await f.until(() => f.got.ended);
    expect(f.got.text).to.equal('ab\n');
    f.detach();
  });

  it("the API side numbers, cuts and stores what the client sends; the whole run's stdin stays within the limit", async () => {
    const id = randomUUID();
    const errors: Error[] = [];
    const input = new RunInput(t.db, id, 'x'.repeat(10), (e) => errors.push(e), new StdinPace(1000));
    input.admitted();
    const big = 'é'.repeat(3000);
    expect(input.write('one\n', false)).to.equal(null);
    expect(input.write(big, false)).to.equal(null);
    expect(input.write('y'.repeat(REQUEST_LIMITS.inputMaxBytes), false)).to.deep.equal({
      reason: 'input_limit',
      limit: REQUEST_LIMITS.inputMaxBytes,
      wouldBe: 10 + 4 + 6000 + REQUEST_LIMITS.inputMaxBytes,
    });
    expect(input.isClosed).to.equal(true);
    expect(input.write('z', false)).to.deep.equal({ reason: 'stdin_closed' });
    await input.settled();
    expect(errors).to.deep.equal([]);
    const rows = await storedInput(t.db, id);
    expect(rows.map((r) => r.n)).to.deep.equal(rows.map((_, i) => i));
    expect(rows.filter((r) => 'd' in r).map((r) => ('d' in r ? r.d : '')).join('')).to.equal(`one\n${big}`);
    // Each chunk fits a NOTIFY payload (under 8000 bytes).
    for (const r of rows) expect(Buffer.byteLength(JSON.stringify(r))).to.be.below(8000);
    expect(rows[rows.length - 1]).to.deep.equal({ i: id, n: rows.length - 1, eof: true });

    const f = attach(feeds, id, 10);
    await f.until(() => f.got.ended);
    expect(f.got.text).to.equal(`one\n${big}`);
    f.detach();
  });

  it('nothing is stored before the run is admitted; what waited is stored then, or dropped with a refusal', async () => {
    const stored = async (id: string) => (await sql<{ n: string }>`SELECT count(*) AS n FROM submission_input WHERE submission_id = ${id}::uuid`.execute(t.db)).rows[0]!.n;
    const admitted = randomUUID();
    const a = new RunInput(t.db, admitted, '', (e) => expect.fail(e.message), new StdinPace(1000));
    expect(a.write('early\n', false)).to.equal(null);
    a.end();
    await a.settled();
    expect(await stored(admitted), 'rows before admission').to.equal('0');
    a.admitted();
    await a.settled();
    expect((await storedInput(t.db, admitted)).map((r) => ('d' in r ? r.d : 'eof'))).to.deep.equal(['early\n', 'eof']);

    const refused = randomUUID();
    const r = new RunInput(t.db, refused, '', (e) => expect.fail(e.message), new StdinPace(1000));
    expect(r.write('never\n', false)).to.equal(null);
    r.drop();
    expect(r.write('more\n', true)).to.deep.equal({ reason: 'stdin_closed' });
    r.admitted();
    await r.settled();
    expect(await stored(refused), 'rows of a refused run').to.equal('0');
  });

  it("a connection's runs store their stdin at its pace: what comes meanwhile joins the next statement", async () => {
    const pace = new StdinPace(5);
    const ids = [randomUUID(), randomUUID()];
    const inputs = ids.map((id) => new RunInput(t.db, id, '', (e) => expect.fail(e.message), pace));
    for (const i of inputs) i.admitted();
    const started = performance.now();
    // A byte every 10 ms to each of two runs, for about a second.
    for (let k = 0; k < 100; k++) {
      for (const i of inputs) expect(i.write(String(k % 10), false)).to.equal(null);
      await new Promise((res) => setTimeout(res, 10));
    }
    for (const i of inputs) i.end();
    await Promise.all(inputs.map((i) => i.settled()));
    const elapsed = performance.now() - started;
    const rows = (await Promise.all(ids.map((id) => storedInput(t.db, id)))).flat();
    // Both runs together, their ends included: at most 5 statements a second (and one at once).
    expect(rows.length, `statements in ${Math.round(elapsed)} ms`).to.be.at.most(Math.floor((elapsed / 1000) * 5) + 1);
    expect(rows.length).to.be.at.least(4);
    for (const id of ids) expect((await storedInput(t.db, id)).map((r) => ('d' in r ? r.d : '')).join('')).to.equal('0123456789'.repeat(10));
  });

  it('what the client sends while a statement is under way is merged into the next: fewer rows, same text, same order', async () => {
    const id = randomUUID();
    const input = new RunInput(t.db, id, '', (e) => expect.fail(e.message), new StdinPace(1000));
    input.admitted();
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    for (const l of letters) expect(input.write(l, false)).to.equal(null);
    input.end();
    await input.settled();
    const rows = await storedInput(t.db, id);
    expect(rows.length).to.be.below(letters.length);
    expect(rows.map((r) => ('d' in r ? r.d : '')).join('')).to.equal(letters);
    expect(rows.map((r) => r.n)).to.deep.equal(rows.map((_, i) => i));
    expect(rows[rows.length - 1]).to.deep.equal({ i: id, n: rows.length - 1, eof: true });
  });

  it('while the LISTEN connection is down, input still arrives: the feeds poll the stored input', async () => {
    // A listener that never connects (no such database): only the poll can deliver.
    const url = new URL(t.url);
    url.pathname = '/runbox_no_such_database';
    const deaf = watchInput({ url: url.toString(), db: t.db });
    try {
      const id = randomUUID();
      const f = attach(deaf, id);
      await new Promise((r) => setTimeout(r, 100));
      await publishInput(t.db, { i: id, n: 0, d: 'polled\n' });
      await publishInput(t.db, { i: id, n: 1, eof: true });
      await f.until(() => f.got.ended);
      expect(f.got.text).to.equal('polled\n');
      f.detach();
    } finally {
      await deaf.close();
    }
  });

  it('input that cannot be stored is said once, and stdin takes no more (later chunks would wait behind the missing one)', async () => {
    const url = new URL(t.url);
    url.pathname = '/runbox_no_such_database';
    const gone = connect(url.toString(), { max: 1, applicationName: 'runbox-test' });
    try {
      const errors: Error[] = [];
      const input = new RunInput(gone.db, randomUUID(), '', (e) => errors.push(e), new StdinPace(1000));
      input.admitted();
      expect(input.write('lost\n', false)).to.equal(null);
      expect(input.write('queued\n', true)).to.equal(null);
      await input.settled();
      expect(errors).to.have.length(1);
      expect(input.isClosed).to.equal(true);
      expect(input.write('more\n', false)).to.deep.equal({ reason: 'stdin_closed' });
    } finally {
      await gone.close();
    }
  });

  it('a detached feed gets nothing more; old input is pruned', async () => {
    const id = randomUUID();
    const f = attach(feeds, id);
    f.detach();
    await publishInput(t.db, { i: id, n: 0, d: 'late\n' });
    await new Promise((r) => setTimeout(r, 300));
    expect(f.got.text).to.equal('');
    await sql`UPDATE submission_input SET created_at = now() - interval '1 hour' WHERE submission_id = ${id}::uuid`.execute(t.db);
    expect(await pruneInput(t.db)).to.be.at.least(1);
    expect(await storedInput(t.db, id)).to.deep.equal([]);
  });
});
