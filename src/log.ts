import pino, { type Logger } from 'pino';
import type { Config } from './config.js';

// Structured JSON logs, one line per event, for every long-running part. Children
// carry context: `submission` (the submission id) on everything about one run,
// `runner`/`sender`/`mailer` on everything of one component.

export type { Logger } from 'pino';

export function createLogger(config: Pick<Config, 'RUNBOX_LOG_LEVEL'>, name: string, fd: 1 | 2 = 1): Logger {
  return pino(
    {
      name,
      level: config.RUNBOX_LOG_LEVEL,
      // ISO times read better in journald and in log search than epoch milliseconds.
      timestamp: pino.stdTimeFunctions.isoTime,
      // Error objects become {type, message, stack} under `err`.
      serializers: { err: pino.stdSerializers.err },
    },
    // Synchronous: the last lines before a crash are not lost.
    pino.destination({ fd, sync: true }),
  );
}
