import { startApi } from '../api/server.js';
import { startSender } from '../callbacks/sender.js';
import { loadConfig, publicUrl } from '../config.js';
import { databaseClock } from '../db/clock.js';
import { connectFor } from '../db/connections.js';
import { migrate } from '../db/migrate.js';
import { startMailer } from '../email/mailer.js';
import { startAdminListener } from '../metrics/listener.js';
import { watchQueue } from '../metrics/registry.js';
import { startPurger } from '../retention/purger.js';
import { startRunner } from '../runner/daemon.js';
import { onShutdownSignal, processLogger } from '../runner/process.js';
import { createSandbox } from '../sandbox/index.js';
import { claimForRunner } from '../runner/uid-range.js';

// `npm start`: the API, the runner and the callback sender in one process, as chosen
// by RUNBOX_COMPONENTS. Stops gracefully on SIGINT/SIGTERM: the API stops taking
// requests first, then the runner finishes (or hands back) its jobs.

interface Component {
  name: string;
  stop(): Promise<void>;
}

const config = loadConfig();
const log = processLogger(config, 'runbox');
const wanted = new Set(config.RUNBOX_COMPONENTS.split(','));
const handle = connectFor(config, { api: wanted.has('api'), sender: wanted.has('sender'), runner: wanted.has('runner') }, 'runbox');
const started: Component[] = [];

async function shutdown(): Promise<void> {
  // Reverse start order: API first, so no new work arrives while the runner drains.
  for (const c of [...started].reverse()) {
    try {
      await c.stop();
      log.info({ component: c.name }, 'stopped');
    } catch (err) {
      log.error({ component: c.name, err: (err as Error).message }, 'stopping failed');
    }
  }
  await handle.close();
}

try {
  const schema = await migrate(handle.db);
  if (schema.applied.length > 0 || schema.indexes.length > 0) log.info({ migrations: schema.applied, indexes: schema.indexes }, 'database schema updated');
  // Expand-only migrations of a newer release: this one runs against them (src/db/migrate.ts).
  if (schema.newer.length > 0) log.warn({ migrations: schema.newer }, 'the database was migrated by a newer release; running against its schema');
  watchQueue(handle.db, config.RUNBOX_LEASE_SECONDS);

  if (wanted.has('runner')) {
    // The sandbox uids of this runner's slots, claimed against every other runner on the host.
    const uids = await claimForRunner(config);
    started.push({ name: 'sandbox uid range', stop: () => uids.release() });
    log.info({ first: uids.first, last: uids.last, lock: uids.file }, 'sandbox uids claimed');
    const claimed = { ...config, RUNBOX_SANDBOX_UID_BASE: uids.first };
    const sandbox = await createSandbox(claimed);
    const runner = await startRunner({ db: handle.db, config: claimed, sandbox, log });
    started.push({ name: 'runner', stop: () => runner.stop() });
  }

  if (wanted.has('sender')) {
    const sender = await startSender({ db: handle.db, config, log });
    started.push({ name: 'sender', stop: () => sender.stop() });
    // Usage emails go out with the callbacks: the same unprivileged component.
    const mailer = await startMailer({ db: handle.db, config, log });
    started.push({ name: 'mailer', stop: () => mailer.stop() });
    // Submissions past RUNBOX_RETENTION_DAYS go hourly, one host at a time (src/retention).
    const purger = startPurger({ db: handle.db, config, log });
    started.push({ name: 'purge', stop: () => purger.stop() });
  }

  if (wanted.has('api')) {
    // Admission and usage go by the database's time, whatever this host's clock says.
    const clock = await databaseClock(handle.db);
    const api = await startApi({ db: handle.db, config, clock, log });
    started.push({
      name: 'api',
      stop: async () => {
        clock.close();
        await api.close();
      },
    });
    const base = `http://${api.host.includes(':') ? `[${api.host}]` : api.host}:${api.port}`;
    log.info({ url: base }, `API listening on ${base}/api/`);
    log.info({ url: publicUrl({ ...config, RUNBOX_PORT: api.port }) }, `web portal: open ${publicUrl({ ...config, RUNBOX_PORT: api.port })}/ to sign up and create keys`);
  }

  if (config.RUNBOX_ADMIN_HOST) {
    // One registry for every component of this process.
    const admin = await startAdminListener(config.RUNBOX_ADMIN_HOST, config.RUNBOX_ADMIN_PORT);
    started.unshift({ name: 'admin listener', stop: () => admin.close() });
    log.info({ host: admin.host, port: admin.port }, `metrics on http://${admin.host}:${admin.port}/metrics`);
  }

  log.info({ components: [...wanted] }, 'runbox started');
  onShutdownSignal(log, shutdown);
} catch (err) {
  // The usual first-run stumble gets its remedy in the message.
  const inUse = (err as NodeJS.ErrnoException).code === 'EADDRINUSE';
  const hint = inUse ? `: ${config.RUNBOX_HOST}:${config.RUNBOX_PORT} is in use (another runbox?); stop what listens there or set RUNBOX_PORT` : '';
  log.fatal({ err: (err as Error).stack ?? String(err) }, `runbox could not start${hint}`);
  await shutdown();
  process.exit(1);
}
