import { execFileSync } from 'node:child_process';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

// A throwaway PostgreSQL cluster of its own (initdb in a temporary directory, started
// with pg_ctl as the postgres user): for tests and benchmarks that stop or restart the
// database, put it behind PgBouncer, make it listen on an address of their own, or
// measure its CPU and WAL without the machine's own cluster's other users. The machine's
// cluster and its configuration are never touched. Needs root (runuser) and the server
// binaries of Debian's postgresql package.

export interface ClusterOptions {
  /** listen_addresses (default: none, the Unix socket only). */
  listen?: string;
  maxConnections?: number;
  /** Lines added to pg_hba.conf (initdb's own trust the local socket and loopback). */
  hba?: string[];
  /** Further settings, `-c name=value`. */
  settings?: Record<string, string | number>;
}

export interface Cluster {
  /** The data directory's parent; the Unix socket lives here. */
  dir: string;
  port: number;
  /** A URL of database `db` as the postgres superuser, over the Unix socket, or TCP to `host`. */
  url(db: string, host?: string): string;
  /** Runs SQL as the superuser in database `db` (default postgres). */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, db?: string): Promise<R[]>;
  start(): void;
  stop(): void;
  /** The postmaster's pid (its children are the backends). */
  postmasterPid(): number;
  /** Stops the cluster (if running) and removes its files. */
  remove(): void;
}

/** The newest installed PostgreSQL server's binaries, or undefined. */
export function serverBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  const v = versions[versions.length - 1];
  return v ? join(root, v, 'bin') : undefined;
}

/** A TCP port free on all addresses right now. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const idOf = (flag: '-u' | '-g') => Number(execFileSync('id', [flag, 'postgres']).toString());

export async function createCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const bin = serverBinaries();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'runbox-pg-'));
  chownSync(dir, idOf('-u'), idOf('-g'));
  const data = join(dir, 'data');
  const asPostgres = (cmd: string, args: string[]) =>
    execFileSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { stdio: 'pipe', timeout: 120_000 });
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-instructions']);
  for (const line of options.hba ?? []) appendFileSync(join(data, 'pg_hba.conf'), `${line}\n`);
  const port = await freePort();
  const settings: Record<string, string | number> = {
    listen_addresses: `'${options.listen ?? ''}'`,
    max_connections: options.maxConnections ?? 100,
    ...options.settings,
  };
  const serverOptions = [`-k ${dir}`, `-p ${port}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const cluster: Cluster = {
    dir,
    port,
    url: (db, host) => (host ? `postgresql://postgres@${host}:${port}/${db}` : `postgresql://postgres@${encodeURIComponent(dir)}:${port}/${db}`),
    query: async (text, db = 'postgres') => {
      const c = new pg.Client({ host: dir, port, user: 'postgres', database: db });
      await c.connect();
      try {
        return (await c.query(text)).rows;
      } finally {
        await c.end();
      }
    },
    start: () => asPostgres('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-w', '-o', serverOptions, 'start']),
    stop: () => asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']),
    postmasterPid: () => Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]),
    remove: () => {
      try {
        cluster.stop();
      } catch {
        // not running
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  return cluster;
}
