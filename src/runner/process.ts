import type { Config } from '../config.js';
import { createLogger, type Logger } from '../log.js';

// What the long-running entries (npm start, the runner alone) share: JSON logs, and
// a graceful stop on SIGINT/SIGTERM (a second signal exits at once).

export function processLogger(config: Config, name: string): Logger {
  return createLogger(config, name);
}

export function onShutdownSignal(log: Logger, shutdown: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(130);
    }
    stopping = true;
    log.info({ signal }, 'stopping');
    shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err: (err as Error)?.stack ?? String(err) }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
