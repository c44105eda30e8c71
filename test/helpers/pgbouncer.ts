import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './pg-cluster.js';

// A PgBouncer of its own (Debian's `pgbouncer`, 1.18 on Debian 12), started with its own
// configuration on a free port and stopped afterwards; the package's own service, if
// any, is left alone. It refuses to run as root, so it runs as `nobody`.

export const PGBOUNCER = '/usr/sbin/pgbouncer';

export interface PgBouncerOptions {
  /** Where PostgreSQL listens (TCP: `nobody` cannot reach a socket directory owned by postgres). */
  host: string;
  port: number;
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user. */
  poolSize?: number;
  maxClientConn?: number;
}

export interface PgBouncer {
  port: number;
  /** The pgbouncer process (its CPU, for benchmarks). */
  pid: number;
  /** A URL of database `db` through PgBouncer. */
  url(db: string): string;
  /** What PgBouncer logged (its errors say why a client was refused). */
  log(): string;
  stop(): Promise<void>;
}

/** Why PgBouncer cannot be used here, or undefined. */
export function pgbouncerMissing(): string | undefined {
  if (!existsSync(PGBOUNCER)) return `${PGBOUNCER} is not installed (apt-get install pgbouncer; npm run setup installs it)`;
  if (process.getuid?.() !== 0) return 'starting PgBouncer as nobody needs root';
  return undefined;
}

export async function startPgBouncer(o: PgBouncerOptions): Promise<PgBouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'runbox-pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const ini = join(dir, 'pgbouncer.ini');
  const logFile = join(dir, 'pgbouncer.log');
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${o.host} port=${o.port} user=postgres`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      // The databases line names the server user; clients are not checked (a test cluster trusts them too).
      'auth_type = any',
      `pool_mode = ${o.poolMode ?? 'transaction'}`,
      `default_pool_size = ${o.poolSize ?? 20}`,
      `max_client_conn = ${o.maxClientConn ?? 500}`,
      `logfile = ${logFile}`,
      'log_connections = 0',
      'log_disconnections = 0',
      'server_check_delay = 1',
      '',
    ].join('\n'),
  );
  chmodSync(ini, 0o644);
  const child: ChildProcess = spawn(PGBOUNCER, ['-u', 'nobody', ini], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  // Ready once it accepts connections.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited (${child.exitCode}): ${stderr}${existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''}`);
    const ok = await new Promise<boolean>((r) => {
      const s = connect(port, '127.0.0.1', () => {
        s.destroy();
        r(true);
      });
      s.once('error', () => r(false));
    });
    if (ok) break;
    if (Date.now() > deadline) throw new Error('pgbouncer did not start listening within 10 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    port,
    pid: child.pid!,
    url: (db) => `postgresql://postgres@127.0.0.1:${port}/${db}`,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : '') + stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
