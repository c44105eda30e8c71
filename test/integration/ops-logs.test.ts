import { expect } from 'chai';
import { createAccount } from '../../src/accounts/accounts.js';
import { createAdminKey } from '../../src/accounts/admin-keys.js';
import { createKey } from '../../src/accounts/keys.js';
import { fakeImagesDir, type FakeImages } from '../helpers/api.js';
import { type CliProcess, spawnCli } from '../helpers/cli-process.js';
import { freshDatabase, type TestDatabase } from '../helpers/db.js';

// What an operator reads in the service's log, from a real `npm start` process (API and
// sender) driven over real HTTP: one line per API answer, sign-ups, log-ins and failed
// log-ins, key changes, and a warning at start when private callback addresses are
// allowed. No line ever carries a key.

type Line = Record<string, unknown> & { level: number; msg: string };

function parsed(p: CliProcess): Line[] {
  return p.lines.flatMap((l) => {
    try {
      return [JSON.parse(l) as Line];
    } catch {
      return [];
    }
  });
}

async function until<T>(what: string, p: CliProcess, find: (lines: Line[]) => T | undefined, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = find(parsed(p));
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`no log line: ${what}\n${p.lines.join('\n')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Enough of a browser for the portal's forms: its cookies and each form's CSRF token. */
class Browser {
  cookies = new Map<string, string>();
  constructor(private base: string) {}
  async request(path: string, form?: Record<string, string>): Promise<{ status: number; body: string }> {
    const headers: Record<string, string> = {};
    if (this.cookies.size) headers['Cookie'] = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (form) headers['Content-Type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(this.base + path, { method: form ? 'POST' : 'GET', headers, body: form ? new URLSearchParams(form).toString() : undefined, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const pair = c.split(';')[0]!;
      this.cookies.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    return { status: res.status, body: await res.text() };
  }
  async submit(path: string, form: Record<string, string>): Promise<number> {
    const token = /name="_csrf" value="([^"]+)"/.exec((await this.request(path)).body)?.[1];
    if (!token) throw new Error(`no CSRF token on ${path}`);
    return (await this.request(path, { _csrf: token, ...form })).status;
  }
}

describe('operator logs', function () {
  this.timeout(120_000);
  let t: TestDatabase;
  let images: FakeImages;
  let p: CliProcess;
  let url: string;

  before(async () => {
    t = await freshDatabase('ops_logs');
    images = fakeImagesDir(['python-3.9.7']);
    p = spawnCli('start.js', {
      RUNBOX_DATABASE_URL: t.url,
      RUNBOX_COMPONENTS: 'api,sender',
      RUNBOX_HOST: '127.0.0.1',
      RUNBOX_PORT: '0',
      RUNBOX_IMAGES_DIR: images.dir,
      RUNBOX_CALLBACK_ALLOW_PRIVATE: '1',
      RUNBOX_SIGNUP: 'open',
      RUNBOX_SMTP_URL: '',
    });
    url = await until('API listening', p, (ls) => ls.find((l) => /^API listening/.test(l.msg))?.['url'] as string | undefined);
    await until('runbox started', p, (ls) => ls.find((l) => l.msg === 'runbox started'));
  });
  after(async () => {
    if (p && p.child.exitCode === null) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
    images?.remove();
    await t?.drop();
  });

  it('warns at start when RUNBOX_CALLBACK_ALLOW_PRIVATE is set', () => {
    const warning = parsed(p).find((l) => l.level === 40 && /RUNBOX_CALLBACK_ALLOW_PRIVATE/.test(l.msg));
    expect(warning, p.lines.join('\n')).to.not.equal(undefined);
    expect(warning!.msg).to.match(/local use and tests only/);
  });

  it('a second start on a port in use exits 1 saying so and naming RUNBOX_PORT', async () => {
    const port = new URL(url).port;
    const second = spawnCli('start.js', { RUNBOX_DATABASE_URL: t.url, RUNBOX_COMPONENTS: 'api', RUNBOX_HOST: '127.0.0.1', RUNBOX_PORT: port, RUNBOX_IMAGES_DIR: images.dir });
    expect(await second.exited).to.equal(1);
    const fatal = parsed(second).find((l) => l.level === 60);
    expect(fatal?.msg, second.lines.join('\n')).to.equal(`runbox could not start: 127.0.0.1:${port} is in use (another runbox?); stop what listens there or set RUNBOX_PORT`);
  });

  it('writes one line per API answer: method, route, status, time and account, never the key', async () => {
    const account = await createAccount(t.db, 'logged@example.com');
    const key = await createKey(t.db, { accountId: account.id, appName: 'logged' });
    expect((await fetch(`${url}/api/usage/`, { headers: { Authorization: key.key } })).status).to.equal(200);
    const missing = '7d1e1c1a-0000-4000-8000-000000000000';
    expect((await fetch(`${url}/api/v2/submissions/${missing}`, { headers: { Authorization: key.key } })).status).to.equal(404);
    const wrongKey = 'rbx_ThisIsNotAKeyButLooksLikeOne0000000000000';
    expect((await fetch(`${url}/api/usage/`, { headers: { Authorization: wrongKey } })).status).to.equal(401);
    expect((await fetch(`${url}/api/limits/?key=${key.key}`)).status).to.equal(200);

    const requests = await until('four request lines', p, (ls) => {
      const found = ls.filter((l) => l.msg === 'api request' && l['method'] === 'GET' && /usage|submissions|limits/.test(String(l['route'])));
      return found.length >= 4 ? found : undefined;
    });
    const strip = (l: Line) => ({ method: l['method'], route: l['route'], status: l['status'], account: l['account'] });
    expect(requests.map(strip)).to.deep.equal([
      { method: 'GET', route: '/api/usage/', status: 200, account: account.id },
      { method: 'GET', route: '/api/v2/submissions/:id', status: 404, account: account.id },
      { method: 'GET', route: '/api/usage/', status: 401, account: undefined },
      { method: 'GET', route: '/api/limits/', status: 200, account: undefined },
    ]);
    for (const l of requests) {
      expect(l.level).to.equal(30);
      expect(l['ms']).to.be.a('number').and.at.least(0);
    }
    const all = p.lines.join('\n');
    expect(all).not.to.include(key.key);
    expect(all).not.to.include(wrongKey);
    expect(all).not.to.include(missing);
  });

  it('writes one line per MCP answer too, with the status its transport sent', async () => {
    const account = await createAccount(t.db, 'mcp-logged@example.com');
    const key = await createKey(t.db, { accountId: account.id, appName: 'mcp' });
    const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: key.key };
    expect((await fetch(`${url}/mcp`, { method: 'POST', headers, body: JSON.stringify(initialize) })).status).to.equal(200);
    // Refused by the transport itself: no Accept of its types.
    expect((await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, Accept: 'application/json' }, body: JSON.stringify(initialize) })).status).to.equal(406);
    expect((await fetch(`${url}/mcp`, { headers: { Authorization: key.key } })).status).to.equal(405);
    const lines = await until('three MCP request lines', p, (ls) => {
      const found = ls.filter((l) => l.msg === 'api request' && l['route'] === '/mcp');
      return found.length >= 3 ? found : undefined;
    });
    expect(lines.map((l) => ({ method: l['method'], status: l['status'], account: l['account'] }))).to.deep.equal([
      { method: 'POST', status: 200, account: account.id },
      { method: 'POST', status: 406, account: account.id },
      { method: 'GET', status: 405, account: undefined },
    ]);
    expect(p.lines.join('\n')).not.to.include(key.key);
  });

  it('logs sign-ups, log-ins and failed log-ins, with no password', async () => {
    const browser = new Browser(url);
    const password = 'correct horse battery';
    expect(await browser.submit('/signup', { email: 'newcomer@example.com', password })).to.equal(302);
    const created = await until('account created', p, (ls) => ls.find((l) => l.msg === 'account created' && l['email'] === 'newcomer@example.com'));
    expect(created['account']).to.match(/^\d+$/);

    const other = new Browser(url);
    expect(await other.submit('/login', { email: 'newcomer@example.com', password: 'wrong password!' })).to.equal(401);
    expect(await other.submit('/login', { email: 'newcomer@example.com', password })).to.equal(302);
    const failed = await until('log-in failed', p, (ls) => ls.find((l) => l.msg === 'log-in failed'));
    expect(failed).to.deep.include({ email: 'newcomer@example.com', level: 30 });
    expect(failed['ip']).to.be.a('string');
    await until('log-in', p, (ls) => ls.find((l) => l.msg === 'log-in' && l['email'] === 'newcomer@example.com'));
    const all = p.lines.join('\n');
    expect(all).not.to.include(password);
    expect(all).not.to.include('wrong password!');
  });

  it('logs key creation, change and revocation by id, never the key or its secret', async () => {
    const account = await createAccount(t.db, 'keys@example.com');
    const admin = await createAdminKey(t.db, 'ops');
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${url}/api/admin/${path}`, { method, headers: { Authorization: admin.key, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const res = await call('POST', `accounts/${account.id}/keys`, { app_name: 'logged app' });
    expect(res.status).to.equal(201);
    const made = (await res.json()) as { id: string; key: string; signing_secret: string };
    expect((await call('PATCH', `keys/${made.id}`, { monthly_limit: 10 })).status).to.equal(200);
    expect((await call('DELETE', `keys/${made.id}`)).status).to.equal(200);

    const events = await until('key events', p, (ls) => {
      const found = ls.filter((l) => /^key /.test(l.msg) && l['key_id'] === made.id);
      return found.length >= 3 ? found : undefined;
    }).catch((e: Error) => {
      console.log(p.lines.filter((l) => l.includes('mcp')).join('\n'));
      throw e;
    });
    expect(events.map((l) => [l.msg, l['account']])).to.deep.equal([
      ['key created', account.id],
      ['key changed', account.id],
      ['key revoked', account.id],
    ]);
    expect(events[1]!['fields']).to.deep.equal(['monthly_limit']);
    const adminLine = await until('admin request line', p, (ls) => ls.find((l) => l.msg === 'api request' && l['route'] === '/api/admin/keys/:key_id' && l['method'] === 'DELETE'));
    expect(adminLine['admin_key']).to.equal(admin.id);
    const all = p.lines.join('\n');
    for (const secret of [made.key, made.signing_secret, admin.key]) expect(all).not.to.include(secret);
  });
});
