import { loadConfig } from '../config.js';
import { connect } from '../db/connect.js';
import { startRunner } from '../runner/daemon.js';
import { onShutdownSignal, processLogger } from '../runner/process.js';
import { createSandbox } from '../sandbox/index.js';
import { claimForRunner } from '../runner/uid-range.js';

// A runner on its own (a runner-only host): claims and runs jobs until SIGTERM.

const config = loadConfig();
const log = processLogger(config, 'runbox-runner');
const handle = connect(config.RUNBOX_DATABASE_URL, { max: config.RUNBOX_RUNNER_SLOTS + 4, applicationName: 'runbox-runner' });
try {
  const uids = await claimForRunner(config);
  log.info({ first: uids.first, last: uids.last, lock: uids.file }, 'sandbox uids claimed');
  const claimed = { ...config, RUNBOX_SANDBOX_UID_BASE: uids.first };
  const sandbox = await createSandbox(claimed);
  const runner = await startRunner({ db: handle.db, config: claimed, sandbox, log });
  onShutdownSignal(log, async () => {
    await runner.stop();
    await uids.release();
    await handle.close();
  });
} catch (err) {
  log.fatal({ err: (err as Error).message }, 'runner could not start');
  await handle.close();
  process.exit(1);
}
