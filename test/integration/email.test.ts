import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { SMTPServer } from 'smtp-server';
import { setAccountLimits, createAccount } from '../../src/accounts/accounts.js';
import { createKey, type CreatedKey } from '../../src/accounts/keys.js';
import { startMailer, type Mailer } from '../../src/email/mailer.js';
import { crossedThresholds } from '../../src/email/thresholds.js';
import { fakeImagesDir, testConfig, type FakeImages } from '../helpers/api.js';
import { spawnApiProcess, type ApiProcess } from '../helpers/api-process.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';
import { PROJECT_ROOT } from '../../src/util/paths.js';

// Usage emails (spec 6.3): written by admission exactly once per account or key,
// month and threshold, even when two API processes admit concurrently, and sent by
// the mailer to a real SMTP server on this host.

interface Received {
  from: string;
  to: string[];
  data: string;
}

/** A local SMTP server; `refuse` recipients get a temporary 451 until it is cleared. */
async function smtpServer(): Promise<{ url: string; mails: Received[]; refuse: Set<string>; close(): Promise<void> }> {
  const mails: Received[] = [];
  const refuse = new Set<string>();
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, cb) {
      if (refuse.has(address.address)) {
        const err = new Error('mailbox busy, try later') as Error & { responseCode: number };
        err.responseCode = 451;
        cb(err);
        return;
      }
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        cb();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { url: `smtp://127.0.0.1:${port}`, mails, refuse, close: () => new Promise((r) => server.close(() => r())) };
}

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The Subject header, unfolded (long headers continue on indented lines). */
const subjectOf = (m: Received) => decodeWords(/^Subject: (.*)$/m.exec(m.data.replace(/\r?\n[ \t]+/g, ' '))?.[1] ?? '');

/** RFC 2047 Q-encoded words (nodemailer encodes subjects with quotes that way). */
function decodeWords(header: string): string {
  return header
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?([^?]*)\?=/gi, (_, q: string) =>
      Buffer.from(q.replace(/_/g, ' ').replace(/=([0-9A-F]{2})/gi, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8'),
    );
}
const quiet = pino({ level: 'silent' });

/** The real runbox-admin as a child process. */
function adminCli(url: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [join(PROJECT_ROOT, 'dist/src/cli/admin.js'), ...args], { env: { ...process.env, RUNBOX_DATABASE_URL: url } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('usage email thresholds', () => {
  it('are reached when usage moves from below to at or above 80% and 100%', () => {
    expect(crossedThresholds(7, 8, 10)).to.deep.equal([80]);
    expect(crossedThresholds(8, 9, 10)).to.deep.equal([]);
    expect(crossedThresholds(9, 10, 10)).to.deep.equal([100]);
    expect(crossedThresholds(0, 10, 10)).to.deep.equal([80, 100]);
    expect(crossedThresholds(3, 4, 5)).to.deep.equal([80]);
    expect(crossedThresholds(0, 3, null)).to.deep.equal([]);
    expect(crossedThresholds(0, 3, 0)).to.deep.equal([]);
  });
});

describe('usage emails', function () {
  this.timeout(120_000);
  let t: TestDatabase;
  let images: FakeImages;
  let smtp: Awaited<ReturnType<typeof smtpServer>>;
  const apis: ApiProcess[] = [];
  const mailers: Mailer[] = [];

  before(async () => {
    t = await freshDatabase('email');
    images = fakeImagesDir(['python-3.9.7']);
    smtp = await smtpServer();
  });
  afterEach(async () => {
    for (const m of mailers.splice(0)) await m.stop();
  });
  after(async () => {
    for (const a of apis) await a.stop();
    await smtp?.close();
    images?.remove();
    await t?.drop();
  });

  const admin = (...args: string[]) => adminCli(t.url, args);

  async function submit(api: ApiProcess, key: CreatedKey): Promise<number> {
    const res = await fetch(`${api.url}/api/v2/run-code/`, {
      method: 'POST',
      headers: { Authorization: key.key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ code: 'print(1)', compiler: 'python-3.9.7' }),
    });
    await res.text();
    return res.status;
  }

  it('one email per threshold for the account and for a key with its own limit, under concurrent admissions from two API processes', async () => {
    const env = { RUNBOX_DATABASE_URL: t.url, RUNBOX_IMAGES_DIR: images.dir };
    apis.push(await spawnApiProcess(env), await spawnApiProcess(env));
    const account = await createAccount(t.db, 'owner@example.test');
    await setAccountLimits(t.db, account.id, { monthlyLimit: 20, perMinute: 1000, pending: 1000 });
    const limited = await createKey(t.db, { accountId: account.id, appName: 'limited app', monthlyLimit: 6 });
    const open = await createKey(t.db, { accountId: account.id, appName: 'open app' });

    // Two bursts, alternating processes. First 14 at once: 6 through the limited key
    // (its limit) and 8 through the other, all admitted (account at 14 of 20). Then 11
    // at once through the other key: the account allowance of 20 stops 5 of them. (In
    // one burst, the allowance could run out before the limited key reached its limit.)
    const first = Array.from({ length: 14 }, (_, i) => submit(apis[i % 2]!, i < 6 ? limited : open));
    const firstStatuses = await Promise.all(first);
    expect(firstStatuses.every((s) => s === 200)).to.equal(true);
    const second = Array.from({ length: 11 }, (_, i) => submit(apis[i % 2]!, open));
    const statuses = [...firstStatuses, ...(await Promise.all(second))];
    expect(statuses.filter((s) => s === 200).length).to.equal(20);
    expect(statuses.filter((s) => s === 429).length).to.equal(5);
    // The limited key is full: one more through it is refused and changes nothing.
    expect(await submit(apis[0]!, limited)).to.equal(429);

    const rows = await t.db.selectFrom('usage_emails').selectAll().orderBy('id').execute();
    const summary = rows.map((r) => `${r.key_id ?? 'account'}:${r.threshold}`).sort();
    expect(summary).to.deep.equal([`${limited.id}:100`, `${limited.id}:80`, 'account:100', 'account:80'].sort());
    for (const r of rows) expect(r.to_address).to.equal('owner@example.test');

    // Two mailers on the outbox at once: each email goes out once.
    const config = testConfig(t.url, images.dir, { RUNBOX_SMTP_URL: smtp.url, RUNBOX_MAIL_FROM: 'runbox <ops@example.test>', RUNBOX_POLL_MS: '200' });
    mailers.push(await startMailer({ db: t.db, config, log: quiet }), await startMailer({ db: t.db, config, log: quiet }));
    await until('four emails', () => smtp.mails.length >= 4);
    await until('every row marked sent', async () => (await t.db.selectFrom('usage_emails').select('id').where('sent_at', 'is', null).execute()).length === 0);
    await new Promise((r) => setTimeout(r, 1500)); // a poll round of both mailers: nothing more may arrive
    expect(smtp.mails.length).to.equal(4);
    for (const m of smtp.mails) {
      expect(m.to).to.deep.equal(['owner@example.test']);
      expect(m.from).to.equal('ops@example.test');
    }
    const subjects = smtp.mails.map(subjectOf).sort();
    expect(subjects.filter((s) => /account's monthly allowance/.test(s))).to.have.length(2);
    expect(subjects.filter((s) => /key "limited app"/.test(s))).to.have.length(2);
    expect(subjects.some((s) => /80% of your account's monthly allowance used/.test(s))).to.equal(true);
    expect(subjects.some((s) => /monthly limit of key "limited app" is used up/.test(s))).to.equal(true);
  });

  it('a refund that brings usage back under a threshold does not send it again', async () => {
    const account = await createAccount(t.db, 'refund@example.test');
    await setAccountLimits(t.db, account.id, { monthlyLimit: 5, perMinute: 1000, pending: 1000 });
    const key = await createKey(t.db, { accountId: account.id, appName: 'k' });
    for (let i = 0; i < 4; i++) expect(await submit(apis[i % 2]!, key)).to.equal(200);
    // Usage back to 3 (as a refund would), then up to 4 again.
    await t.db.updateTable('account_usage').set({ submissions: 3 }).where('account_id', '=', account.id).execute();
    expect(await submit(apis[0]!, key)).to.equal(200);
    const rows = await t.db.selectFrom('usage_emails').select(['threshold']).where('account_id', '=', account.id).execute();
    expect(rows.map((r) => r.threshold)).to.deep.equal([80]);
  });

  it('a refused send is retried with backoff until the server takes it', async () => {
    const account = await createAccount(t.db, 'busy@example.test');
    await t.db
      .insertInto('usage_emails')
      .values({ account_id: account.id, key_id: null, month: '2026-11', threshold: 80, used: 8, monthly_limit: 10, to_address: 'busy@example.test' })
      .execute();
    smtp.refuse.add('busy@example.test');
    const busyMails = () => smtp.mails.filter((m) => m.to.includes('busy@example.test')).length;
    const config = testConfig(t.url, images.dir, { RUNBOX_SMTP_URL: smtp.url, RUNBOX_POLL_MS: '100', RUNBOX_MAIL_BACKOFF_MS: '200' });
    mailers.push(await startMailer({ db: t.db, config, log: quiet }));
    await until('two failed attempts', async () => {
      const r = await t.db.selectFrom('usage_emails').select(['attempts', 'last_error']).where('account_id', '=', account.id).executeTakeFirstOrThrow();
      return r.attempts >= 2 && /451/.test(r.last_error ?? '');
    });
    expect(busyMails()).to.equal(0);
    smtp.refuse.delete('busy@example.test');
    await until('the email sent', () => smtp.mails.some((m) => m.to.includes('busy@example.test')));
    await until('marked sent', async () => {
      const r = await t.db.selectFrom('usage_emails').select(['sent_at', 'state']).where('account_id', '=', account.id).executeTakeFirstOrThrow();
      return r.sent_at !== null && r.state === 'sent';
    });
    expect(smtp.mails.filter((m) => m.to.includes('busy@example.test'))).to.have.length(1);
  });

  it('an email refused on every attempt ends dead; runbox-admin lists it and resends it', async () => {
    const account = await createAccount(t.db, 'gone@example.test');
    const { id } = await t.db
      .insertInto('usage_emails')
      .values({ account_id: account.id, key_id: null, month: '2026-11', threshold: 100, used: 10, monthly_limit: 10, to_address: 'gone@example.test' })
      .returning('id')
      .executeTakeFirstOrThrow();
    smtp.refuse.add('gone@example.test');
    const config = testConfig(t.url, images.dir, {
      RUNBOX_SMTP_URL: smtp.url,
      RUNBOX_POLL_MS: '100',
      RUNBOX_MAIL_BACKOFF_MS: '50',
      RUNBOX_MAIL_MAX_ATTEMPTS: '3',
    });
    mailers.push(await startMailer({ db: t.db, config, log: quiet }));
    const row = () => t.db.selectFrom('usage_emails').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    await until('the email dead', async () => (await row()).state === 'dead');
    // Dead stays dead: no further attempt however long the mailer runs.
    await new Promise((r) => setTimeout(r, 1500));
    const dead = await row();
    expect(dead).to.include({ state: 'dead', attempts: 3, sent_at: null });
    expect(dead.last_error).to.match(/451/);

    const listed = await admin('email', 'list', '--state', 'dead', '--account', String(account.id));
    expect(listed.code, listed.stderr).to.equal(0);
    const rows = JSON.parse(listed.stdout) as { id: string; state: string; attempts: number; last_error: string; to_address: string }[];
    expect(rows.map((r) => [r.id, r.state, r.attempts, r.to_address])).to.deep.equal([[String(id), 'dead', 3, 'gone@example.test']]);
    expect(rows[0]!.last_error).to.match(/451/);
    expect((await admin('email', 'list', '--state', 'lost')).stderr).to.match(/--state must be one of pending, sent, dead/);
    expect((await admin('email', 'resend', '--id', '999999999')).stderr).to.match(/no usage email 999999999/);

    smtp.refuse.delete('gone@example.test');
    const resent = await admin('email', 'resend', '--id', String(id));
    expect(resent.code, resent.stderr).to.equal(0);
    expect(JSON.parse(resent.stdout)).to.include({ id: String(id), state: 'pending', attempts: 0 });
    await until('the resent email sent', async () => (await row()).state === 'sent');
    expect(smtp.mails.filter((m) => m.to.includes('gone@example.test'))).to.have.length(1);
    expect((await row()).attempts).to.equal(1);
  });

  it('without RUNBOX_SMTP_URL the emails stay in the outbox and are logged', async () => {
    const account = await createAccount(t.db, 'nosmtp@example.test');
    await t.db
      .insertInto('usage_emails')
      .values({ account_id: account.id, key_id: null, month: '2026-11', threshold: 100, used: 10, monthly_limit: 10, to_address: 'nosmtp@example.test' })
      .execute();
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(l) });
    const config = testConfig(t.url, images.dir, { RUNBOX_SMTP_URL: '', RUNBOX_POLL_MS: '100' });
    mailers.push(await startMailer({ db: t.db, config, log }));
    await until('the log line', () => lines.some((l) => l.includes('nosmtp@example.test')));
    const row = await t.db.selectFrom('usage_emails').select(['sent_at', 'attempts']).where('account_id', '=', account.id).executeTakeFirstOrThrow();
    expect(row.sent_at).to.equal(null);
    expect(row.attempts).to.equal(0);
    expect(JSON.parse(lines.find((l) => l.includes('nosmtp@example.test'))!).msg).to.match(/kept in the outbox/);
  });
});
