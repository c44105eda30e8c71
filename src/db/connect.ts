import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { clientConfig } from './url.js';

// bigint (int8) columns as strings keeps ids exact; counts we cast to int in SQL.
export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  pool: pg.Pool;
  close(): Promise<void>;
}

// The pool behind each handle made here, for the few hot statements sent as named
// prepared statements (parsed and planned once per connection), which Kysely cannot name.
const pools = new WeakMap<Db, { pool: pg.Pool; named: boolean }>();

/** The pool of a handle made here, and whether it may use named prepared statements. */
export function poolOf(db: Db): { pool: pg.Pool; named: boolean } | undefined {
  return pools.get(db);
}

/**
 * One statement on a pooled connection. Unlike pool.query, an error the server answered
 * (a deadlock to retry, a constraint) keeps the connection: pool.query closes it on any
 * error, and the next statement pays a new connection and its planning again. A broken
 * connection is still dropped (the pool checks it on release).
 */
export async function poolQuery<R extends pg.QueryResultRow>(pool: pg.Pool, query: pg.QueryConfig): Promise<pg.QueryResult<R>> {
  const client = await pool.connect();
  try {
    return await client.query<R>(query);
  } finally {
    client.release();
  }
}

export interface ConnectOptions {
  max?: number;
  applicationName?: string;
  /**
   * Named prepared statements (default true). Off behind a pooler in transaction mode,
   * whose server connections each client's statements land on in turn: a name prepared
   * on one is missing or already taken on another.
   */
  namedStatements?: boolean;
}

export function connect(url: string, options: ConnectOptions = {}): DbHandle {
  const pool = new pg.Pool({
    ...clientConfig(url),
    max: options.max ?? 10,
    application_name: options.applicationName ?? 'runbox',
    // A Postgres that went away must not hang callers forever: fail fast, retry later.
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its connection (Postgres restarted) emits 'error' on the pool;
  // without a listener that would crash the process. The next checkout reconnects.
  pool.on('error', () => {});
  // A checked-out client whose socket breaks (Postgres stopped mid-query: EPIPE) emits
  // 'error' on the client itself, where the pool listens only while it is idle; that
  // would crash the process too. The query in flight still fails, and the pool drops
  // the broken client when it is released.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  pools.set(db, { pool, named: options.namedStatements ?? true });
  return {
    db,
    pool,
    close: async () => {
      await db.destroy();
    },
  };
}
