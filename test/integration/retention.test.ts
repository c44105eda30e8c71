import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';
import { sql } from 'kysely';
import { createKey, lastUsedByKey } from '../../src/accounts/keys.js';
import type { Db } from '../../src/db/connect.js';
import type { SubmissionState } from '../../src/db/schema.js';
import { purgeOlderThan, retentionCutoff } from '../../src/retention/purge.js';
import { purgeOnce } from '../../src/retention/purger.js';
import { runsPerDay, usageRecord } from '../../src/quota/usage.js';
import { monthOf } from '../../src/util/clock.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';
import { accountWithKey, errorOf, fakeImagesDir, startTestApi, TestClock, testConfig, type FakeImages, type TestApi } from '../helpers/api.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { Client } from '../helpers/portal-client.js';
import { successResult } from '../helpers/run-result.js';

// Retention (src/retention): ended submissions older than RUNBOX_RETENTION_DAYS are
// deleted with their delivered (or dead) callbacks, batch by batch; queued and running
// ones and those whose callback is pending stay. Every face that looks a submission up
// answers a purged one with 410 submission_expired (the portal in words) to its own
// account, and 404 to any other; the dashboard's figures are the same before and after.

const DAY_MS = 24 * 3600 * 1000;
const RETENTION_DAYS = 30;

interface Row {
  account: string;
  key?: string | null;
  daysAgo: number;
  state?: SubmissionState;
  units?: number;
  refunded?: boolean;
  delivery?: 'pending' | 'delivered' | 'dead';
}

async function insertSubmission(db: Db, r: Row): Promise<string> {
  const created = new Date(Date.now() - r.daysAgo * DAY_MS);
  const state = r.state ?? 'finished';
  const ended = state === 'finished' || state === 'failed';
  const row = await db
    .insertInto('submissions')
    .values({
      account_id: r.account,
      key_id: r.key ?? null,
      compiler: 'python-3.9.7',
      code: `print(${r.daysAgo})\n`,
      input: 'some input',
      month: monthOf(created),
      units: r.units ?? 1,
      state,
      refunded: r.refunded ?? false,
      created_at: created,
      ...(ended ? { started_at: created, finished_at: created } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  if (ended) {
    await db.updateTable('submissions').set({ result: JSON.stringify(successResult(row.id, { output: `${r.daysAgo}\n` })) }).where('id', '=', row.id).execute();
  }
  if (r.delivery) {
    await db
      .insertInto('callback_deliveries')
      .values({ submission_id: row.id, key_id: r.key!, url: 'https://example.com/cb', payload: JSON.stringify(successResult(row.id)), state: r.delivery })
      .execute();
  }
  return row.id;
}

describe('retention: purging old submissions', function () {
  this.timeout(60_000);
  let t: TestDatabase;
  let images: FakeImages;
  let api: TestApi;
  let portal: Client;
  let owner: string;
  let ownerKey: { id: string; key: string };
  let other: { accountId: string; key: { id: string; key: string } };
  const ids: Record<string, string> = {};
  let baseline: { perDay: Record<string, { day: number; runs: number }[]>; lastUsed: Map<string, Date>; usage: unknown };

  const months = () => [...new Set([0, 1, 35, 40, 45].map((d) => monthOf(new Date(Date.now() - d * DAY_MS))))];
  const figures = async () => ({
    perDay: Object.fromEntries(await Promise.all(months().map(async (m) => [m, await runsPerDay(t.db, owner, m)] as const))),
    lastUsed: await lastUsedByKey(t.db, owner),
    usage: await usageRecord(t.db, { accountId: owner, keyId: ownerKey.id, now: new Date() }),
  });
  const lookup = (key: string, id: string) => fetch(`${api.url}/api/v2/submissions/${id}`, { headers: { Authorization: key } });

  before(async () => {
    t = await freshDatabase('retention');
    images = fakeImagesDir(['python-3.9.7']);
    api = await startTestApi({ db: t.db, config: testConfig(t.url, images.dir, { RUNBOX_RETENTION_DAYS: String(RETENTION_DAYS) }), clock: new TestClock() });
    // The owner signs up in the portal, so its pages can be read as the owner sees them.
    portal = new Client(api.url);
    const email = `retention-${process.pid}@example.com`;
    expect((await portal.post('/signup', { email, password: 'a long enough password' })).res.status).to.equal(302);
    owner = String((await t.db.selectFrom('accounts').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id);
    ownerKey = await createKey(t.db, { accountId: owner, appName: 'kept', redirectUrl: 'https://example.com/cb', monthlyLimit: null });
    other = await accountWithKey(t.db);

    ids.delivered = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 40, units: 3, delivery: 'delivered' });
    ids.refunded = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 40, state: 'failed', refunded: true });
    ids.dead = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 45, delivery: 'dead' });
    ids.noKey = await insertSubmission(t.db, { account: owner, key: null, daysAgo: 41 });
    ids.pending = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 35, delivery: 'pending' });
    ids.stuck = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 45, state: 'queued' });
    ids.recent = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 1 });
    ids.othersOld = await insertSubmission(t.db, { account: other.accountId, key: other.key.id, daysAgo: 40 });
    baseline = await figures();
  });
  after(async () => {
    await api?.close();
    images?.remove();
    await t?.drop();
  });

  it('walks submissions by created_at on an index built without blocking writes', async () => {
    const { rows } = await sql<{ valid: boolean; def: string }>`
      SELECT i.indisvalid AS valid, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE c.relname = 'submissions_created'
    `.execute(t.db);
    expect(rows).to.have.length(1);
    expect(rows[0]!.valid).to.equal(true);
    expect(rows[0]!.def).to.include('(created_at)');
  });

  it('deletes the ended submissions past the retention with their callbacks, batch by batch, and keeps the rest', async () => {
    const cutoff = await retentionCutoff(t.db, RETENTION_DAYS);
    const batches: number[] = [];
    const counts = await purgeOlderThan(t.db, cutoff, { rows: 2, pauseMs: 0, onBatch: (b) => batches.push(b.submissions) });
    expect(counts).to.deep.equal({ submissions: 5, deliveries: 2, busy: false });
    expect(batches).to.deep.equal([2, 2, 1]);
    const left = (await t.db.selectFrom('submissions').select('id').execute()).map((r) => r.id).sort();
    expect(left).to.deep.equal([ids.pending, ids.stuck, ids.recent].sort());
    // The pending delivery stays with its submission; the delivered and the dead one went.
    const deliveries = await t.db.selectFrom('callback_deliveries').select(['submission_id', 'state']).execute();
    expect(deliveries).to.deep.equal([{ submission_id: ids.pending, state: 'pending' }]);
    const tombstones = await t.db.selectFrom('submissions_expired').select(['id', 'account_id']).execute();
    expect(tombstones.map((r) => r.id).sort()).to.deep.equal([ids.delivered, ids.refunded, ids.dead, ids.noKey, ids.othersOld].sort());
    // Nothing more to do: a second pass finds nothing.
    expect(await purgeOlderThan(t.db, cutoff)).to.deep.equal({ submissions: 0, deliveries: 0, busy: false });
  });

  it('keeps the dashboard, the usage record and the keys\' last use exactly as they were', async () => {
    const now = await figures();
    expect(now.perDay).to.deep.equal(baseline.perDay);
    expect([...now.lastUsed]).to.deep.equal([...baseline.lastUsed]);
    expect(now.usage).to.deep.equal(baseline.usage);
    // The purged runs are in the per-day totals: 3 units, the refunded one left out, the keyless one under key 0.
    const days = await t.db.selectFrom('usage_days').select(['key_id', 'runs']).where('account_id', '=', owner).orderBy('key_id').orderBy('day').execute();
    expect(days.reduce((sum, d) => sum + d.runs, 0)).to.equal(3 + 1 + 1);
    expect(days.some((d) => d.key_id === '0' && d.runs === 1)).to.equal(true);
  });

  it('answers the lookup of a purged submission 410 submission_expired, to its account only', async () => {
    const res = await lookup(ownerKey.key, ids.delivered!);
    expect(res.status).to.equal(410);
    const error = await errorOf(res);
    expect(error.code).to.equal('submission_expired');
    expect(error.message).to.match(new RegExp(`^submission ${ids.delivered} has expired: it was made on \\d{4}-\\d\\d-\\d\\d and its code, input and result were deleted on \\d{4}-\\d\\d-\\d\\d \\(submissions are kept for ${RETENTION_DAYS} days\\)$`));
    // Another account's purged submission reads as unknown, as its live ones do.
    expect((await lookup(ownerKey.key, ids.othersOld!)).status).to.equal(404);
    expect((await lookup(other.key.key, ids.delivered!)).status).to.equal(404);
    expect((await lookup(other.key.key, ids.othersOld!)).status).to.equal(410);
    // The ones kept answer whole.
    const kept = await lookup(ownerKey.key, ids.pending!);
    expect(kept.status).to.equal(200);
    const body = (await kept.json()) as { result: { output: string }; callback: { state: string } };
    expect(body.result.output).to.equal('35\n');
    expect(body.callback.state).to.equal('pending');
  });

  it('answers the Judge0 lookups of a purged token 410, and says so in a batch', async () => {
    const show = await fetch(`${api.url}/judge0/submissions/${ids.delivered}`, { headers: { 'X-Auth-Token': ownerKey.key } });
    expect(show.status).to.equal(410);
    expect(((await show.json()) as { error: string }).error).to.include('has expired');
    const batch = await fetch(`${api.url}/judge0/submissions/batch?tokens=${ids.delivered},${ids.recent},${ids.othersOld}`, { headers: { 'X-Auth-Token': ownerKey.key } });
    expect(batch.status).to.equal(200);
    const { submissions } = (await batch.json()) as { submissions: (Record<string, unknown> | null)[] };
    expect(submissions[0]).to.have.keys(['token', 'error']);
    expect(submissions[0]!.token).to.equal(ids.delivered);
    expect(String(submissions[0]!.error)).to.include('has expired');
    expect(submissions[1]!.token).to.equal(ids.recent);
    expect(submissions[1]!.stdout).to.equal('1\n');
    expect(submissions[2]).to.equal(null);
  });

  it("says it in words on the portal's submission page, with status 410", async () => {
    const { res, body } = await portal.request(`/submissions/${ids.delivered}`);
    expect(res.status).to.equal(410);
    expect(body).to.include('<h1>Expired</h1>');
    expect(body).to.match(/This submission has expired: it was made on \d{4}-\d\d-\d\d and its code, input and result were deleted on \d{4}-\d\d-\d\d \(submissions are kept for 30 days\)\. Its runs still count in your usage\./);
    // Redeliver of a purged one says the same.
    const token = await portal.token(`/submissions/${ids.pending}`);
    const redo = await portal.request(`/submissions/${ids.delivered}/redeliver`, { form: { _csrf: token } });
    expect(redo.res.status).to.equal(410);
    // Another account's id is still nothing here.
    expect((await portal.request(`/submissions/${ids.othersOld}`)).res.status).to.equal(404);
    // The list says how long submissions are kept.
    const list = await portal.request('/submissions');
    expect(list.body).to.include('Submissions are kept for 30 days; your usage still counts the older ones.');
    expect(list.body).not.to.include(ids.delivered!);
  });

  it('runs one purge at a time across the deployment', async () => {
    await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 50 });
    const holder = await t.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(7316003)');
      expect(await purgeOnce(t.db, RETENTION_DAYS)).to.equal(null);
    } finally {
      await holder.query('SELECT pg_advisory_unlock(7316003)');
      holder.release();
    }
    expect(await purgeOnce(t.db, RETENTION_DAYS)).to.deep.equal({ submissions: 1, deliveries: 0 });
  });

  describe('runbox-admin', () => {
    const admin = (env: Record<string, string>, ...args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args], { env: { ...process.env, RUNBOX_ENV_FILE: '', RUNBOX_DATABASE_URL: t.url, ...env } }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
        );
      });

    it('submissions purge deletes at once what is past --days (or the configured retention)', async () => {
      const old = await insertSubmission(t.db, { account: owner, key: ownerKey.id, daysAgo: 12 });
      const off = await admin({ RUNBOX_RETENTION_DAYS: '0' }, 'submissions', 'purge');
      expect(off.code).to.equal(2);
      expect(off.stderr).to.include('RUNBOX_RETENTION_DAYS is 0 (keep everything): give --days N');
      const kept = await admin({ RUNBOX_RETENTION_DAYS: '30' }, 'submissions', 'purge');
      expect(kept.code, kept.stderr).to.equal(0);
      expect(JSON.parse(kept.stdout)).to.deep.include({ older_than_days: 30, submissions: 0, deliveries: 0 });
      const done = await admin({ RUNBOX_RETENTION_DAYS: '0' }, 'submissions', 'purge', '--days', '10');
      expect(done.code, done.stderr).to.equal(0);
      expect(JSON.parse(done.stdout)).to.deep.include({ older_than_days: 10, submissions: 1, deliveries: 0 });
      expect(await t.db.selectFrom('submissions_expired').select('id').where('id', '=', old).executeTakeFirst()).to.deep.equal({ id: old });
    });

    it('callback list says a purged submission has expired', async () => {
      const r = await admin({ RUNBOX_RETENTION_DAYS: '30' }, 'callback', 'list', '--submission', ids.delivered!);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.include(`submission ${ids.delivered} has expired`);
    });
  });
});
