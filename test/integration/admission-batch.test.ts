import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import pg from 'pg';
import { admitSubmission, type AdmissionRequest } from '../../src/quota/admit.js';
import { MAX_BATCH } from '../../src/quota/group-commit.js';
import { accountWithKey, counters } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// Group commit: the admissions a process receives together are stored by one call of
// runbox_admit; within it, each is decided on its own (a refusal is an answer, not an
// error), and a request that makes the whole statement fail fails alone.

describe('admission batches', () => {
  let t: TestDatabase;
  let admitCalls = 0;
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;

  before(async () => {
    t = await freshDatabase('admission_batch');
    // Counts the admission statements this process sends.
    proto.query = function (this: unknown, ...args: unknown[]) {
      const first = args[0] as string | { text?: string } | undefined;
      const text = typeof first === 'string' ? first : (first?.text ?? '');
      if (text.includes('runbox_admit(')) admitCalls++;
      return original.apply(this, args);
    };
  });
  after(async () => {
    proto.query = original;
    await t?.drop();
  });

  const request = (accountId: string, keyId: string, extra: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
    accountId,
    keyId,
    compiler: 'gcc-4.9',
    code: 'x',
    input: null,
    tests: null,
    extraParams: null,
    mode: 'async',
    maxAttempts: 3,
    now: new Date(),
    ...extra,
  });

  it('admissions arriving together share one statement, and refusals in it do not stop the others', async () => {
    const a = await accountWithKey(t.db, { limits: { pending: 3 } });
    const b = await accountWithKey(t.db);
    const before = admitCalls;
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () => admitSubmission(t.db, request(a.accountId, a.key.id))),
      admitSubmission(t.db, request(b.accountId, b.key.id)),
    ]);
    expect(admitCalls - before).to.equal(1);
    expect(answers.filter((x) => x.admitted)).to.have.length(4);
    expect(answers.filter((x) => !x.admitted).map((x) => !x.admitted && x.reason)).to.deep.equal(['too_many_pending', 'too_many_pending', 'too_many_pending']);
    expect(answers[6]!.admitted).to.equal(true);
    // Answered after the commit: another connection sees every admitted row.
    expect(await counters(t.db, a.accountId)).to.deep.equal({ submissions: 3, accountUsage: 3, keyUsage: 3 });
    expect(await counters(t.db, b.accountId)).to.deep.equal({ submissions: 1, accountUsage: 1, keyUsage: 1 });
  });

  it(`a burst larger than ${MAX_BATCH} goes out in batches of at most ${MAX_BATCH}`, async () => {
    const a = await accountWithKey(t.db, { limits: { pending: 100, perMinute: 100 } });
    const before = admitCalls;
    const answers = await Promise.all(Array.from({ length: MAX_BATCH + 1 }, () => admitSubmission(t.db, request(a.accountId, a.key.id))));
    expect(answers.every((x) => x.admitted)).to.equal(true);
    expect(admitCalls - before).to.equal(2);
  });

  it('a request that fails the whole statement fails alone', async () => {
    const a = await accountWithKey(t.db);
    const taken = randomUUID();
    expect((await admitSubmission(t.db, request(a.accountId, a.key.id, { id: taken }))).admitted).to.equal(true);
    const [dup, other] = await Promise.allSettled([
      admitSubmission(t.db, request(a.accountId, a.key.id, { id: taken })),
      admitSubmission(t.db, request(a.accountId, a.key.id)),
    ]);
    expect(dup.status).to.equal('rejected');
    expect((dup as PromiseRejectedResult).reason).to.have.property('code', '23505');
    expect(other.status).to.equal('fulfilled');
    expect((other as PromiseFulfilledResult<{ admitted: boolean }>).value.admitted).to.equal(true);
    expect(await counters(t.db, a.accountId)).to.deep.equal({ submissions: 2, accountUsage: 2, keyUsage: 2 });
  });
});
