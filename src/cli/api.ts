import { startApi } from '../api/server.js';
import { loadConfig } from '../config.js';
import { databaseClock } from '../db/clock.js';
import { connectFor } from '../db/connections.js';
import { createLogger } from '../log.js';
import { watchQueue } from '../metrics/registry.js';

// The API alone in its own process (for scaling the API out, and for tests that need
// several API processes on one database). Prints {"listening":{"host","port"}} once
// it accepts connections; RUNBOX_PORT=0 picks a free port.

const config = loadConfig();
const handle = connectFor(config, { api: true }, 'runbox-api');
// Logs go to stderr: stdout carries only the line announcing the port.
const log = createLogger(config, 'runbox-api', 2);
watchQueue(handle.db, config.RUNBOX_LEASE_SECONDS);
// Admission and usage go by the database's time, whatever this host's clock says.
const clock = await databaseClock(handle.db);
const api = await startApi({ db: handle.db, config, clock, log });
process.stdout.write(JSON.stringify({ listening: { host: api.host, port: api.port } }) + '\n');

const stop = (): void => {
  clock.close();
  void api.close().finally(() => handle.close());
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
