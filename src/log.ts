import { isatty } from 'node:tty';
import pino, { type DestinationStream, type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.js';

// Structured JSON logs, one line per event, for every long-running part. Children
// carry context: `submission` (the submission id) on everything about one run,
// `runner`/`sender`/`mailer` on everything of one component. On a terminal (an
// operator running a component by hand) the same events are printed as readable lines
// instead; under systemd, a pipe or a file, JSON as ever.

export type { Logger } from 'pino';

function destination(fd: 1 | 2, readable: boolean): DestinationStream {
  // Synchronous either way: the last lines before a crash are not lost.
  if (!readable) return pino.destination({ fd, sync: true });
  return pretty({
    destination: fd,
    sync: true,
    colorize: true,
    translateTime: 'SYS:HH:MM:ss.l',
    // Always the same on one terminal.
    ignore: 'pid,hostname',
    // One line per event, context after the message, as in the JSON.
    singleLine: true,
  });
}

export function createLogger(
  config: Pick<Config, 'RUNBOX_LOG_LEVEL'>,
  name: string,
  fd: 1 | 2 = 1,
  opts: { readable?: boolean } = {},
): Logger {
  return pino(
    {
      name,
      level: config.RUNBOX_LOG_LEVEL,
      // ISO times read better in journald and in log search than epoch milliseconds.
      timestamp: pino.stdTimeFunctions.isoTime,
      // Error objects become {type, message, stack} under `err`.
      serializers: { err: pino.stdSerializers.err },
    },
    destination(fd, opts.readable ?? isatty(fd)),
  );
}
