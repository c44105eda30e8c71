import { loadConfig } from '../config.js';
import { connectFor } from '../db/connections.js';
import { startRunner, type Runner } from '../runner/daemon.js';
import { onShutdownSignal, processLogger } from '../runner/process.js';
import { createSandbox } from '../sandbox/index.js';
import { claimForRunner, type UidRange } from '../runner/uid-range.js';

// A runner on its own (a runner-only host): claims and runs jobs until SIGTERM.

const config = loadConfig();
const log = processLogger(config, 'runbox-runner');
const handle = connectFor(config, { runner: true }, 'runbox-runner');
let uids: UidRange | undefined;
let runner: Runner | undefined;

// Set before anything starts: a SIGTERM during start-up (a service manager stopping it
// at once) waits for the start, then stops what it made, instead of killing the
// process with its uid range still claimed.
let starting: Promise<void> = Promise.resolve();
onShutdownSignal(log, async () => {
  await starting.catch(() => {});
  await runner?.stop();
  await uids?.release();
  await handle.close();
});

starting = (async () => {
  uids = await claimForRunner(config);
  log.info({ first: uids.first, last: uids.last, lock: uids.file }, 'sandbox uids claimed');
  const claimed = { ...config, RUNBOX_SANDBOX_UID_BASE: uids.first };
  const sandbox = await createSandbox(claimed);
  runner = await startRunner({ db: handle.db, config: claimed, sandbox, log });
})();
try {
  await starting;
} catch (err) {
  log.fatal({ err: (err as Error).message }, 'runner could not start');
  await handle.close();
  process.exit(1);
}
