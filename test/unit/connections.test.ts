import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { listenUrl, namedStatementsAllowed, poolSize, RUNNER_POOL } from '../../src/db/connections.js';

// What each process holds to PostgreSQL and where it LISTENs (docs/operating.md#scaling-out).

describe('connections of a process', () => {
  it('a runner holds the same pool whatever its slots; an API host the configured pool; npm start both', () => {
    for (const slots of ['1', '16', '1024']) {
      expect(poolSize(loadConfig({ RUNBOX_RUNNER_SLOTS: slots }), { runner: true })).to.equal(RUNNER_POOL);
    }
    expect(RUNNER_POOL).to.equal(4);
    expect(poolSize(loadConfig({}), { api: true, sender: true })).to.equal(10);
    expect(poolSize(loadConfig({ RUNBOX_DATABASE_POOL: '25' }), { api: true })).to.equal(25);
    expect(poolSize(loadConfig({ RUNBOX_DATABASE_POOL: '25' }), { api: true, sender: true, runner: true })).to.equal(29);
  });

  it('LISTENs on the database URL, on a direct URL when one is given, or nowhere behind a transaction pooler or with none', () => {
    const db = 'postgresql://db.internal/runbox';
    const bouncer = 'postgresql://bouncer.internal:6432/runbox';
    expect(listenUrl(loadConfig({ RUNBOX_DATABASE_URL: db }))).to.equal(db);
    expect(listenUrl(loadConfig({ RUNBOX_DATABASE_URL: db, RUNBOX_DATABASE_LISTEN_URL: 'none' }))).to.equal(null);
    expect(listenUrl(loadConfig({ RUNBOX_DATABASE_URL: bouncer, RUNBOX_DATABASE_POOLING: 'transaction' }))).to.equal(null);
    expect(listenUrl(loadConfig({ RUNBOX_DATABASE_URL: bouncer, RUNBOX_DATABASE_POOLING: 'transaction', RUNBOX_DATABASE_LISTEN_URL: db }))).to.equal(db);
  });

  it('names prepared statements only where each connection is the server\'s own', () => {
    expect(namedStatementsAllowed(loadConfig({}))).to.equal(true);
    expect(namedStatementsAllowed(loadConfig({ RUNBOX_DATABASE_POOLING: 'transaction' }))).to.equal(false);
    expect(() => loadConfig({ RUNBOX_DATABASE_POOLING: 'statement' })).to.throw(ConfigError, 'RUNBOX_DATABASE_POOLING');
    expect(() => loadConfig({ RUNBOX_DATABASE_POOL: '0' })).to.throw(ConfigError, 'RUNBOX_DATABASE_POOL');
  });
});
