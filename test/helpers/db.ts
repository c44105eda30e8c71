import { randomBytes } from 'node:crypto';
import { Migrator } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../../src/config.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { clientConfig } from '../../src/db/url.js';

// Each test file gets a database of its own, made fresh from the migrations, so suites
// (and developers running them side by side) never see each other's rows.

export function databaseUrl(name: string): string {
  const url = new URL(loadConfig().RUNBOX_DATABASE_URL);
  url.pathname = '/' + name;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(clientConfig(databaseUrl('postgres')));
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * DROP DATABASE … WITH (FORCE) ends the sessions still connected, but a role that is not
 * a superuser may not end an autovacuum worker, so the drop fails while one is at work
 * on the database (SQLSTATE 42501). A plain DROP DATABASE cancels autovacuum itself but
 * fails while sessions are connected (55006): the two are tried in turn until one works.
 */
async function dropDatabase(client: pg.Client, name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== '42501' || attempt >= 20) throw e;
    }
    try {
      await client.query(`DROP DATABASE IF EXISTS "${name}"`);
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== '55006') throw e;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface TestDatabase extends DbHandle {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A database of its own, migrated to the latest schema (or, with `upTo`, up to and including that migration only). */
export async function freshDatabase(label = 'test', opts: { upTo?: string } = {}): Promise<TestDatabase> {
  const name = `runbox_${label.replace(/[^a-z0-9_]/g, '_')}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE "${name}"`));
  const url = databaseUrl(name);
  const handle = connect(url, { max: 20, applicationName: 'runbox-test' });
  if (opts.upTo === undefined) await migrateToLatest(handle.db);
  else {
    const { error } = await new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } }).migrateTo(opts.upTo);
    if (error) throw error;
  }
  return {
    ...handle,
    name,
    url,
    drop: async () => {
      await handle.close();
      await admin((c) => dropDatabase(c, name));
    },
  };
}
