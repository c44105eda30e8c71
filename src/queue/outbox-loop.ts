import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Config } from '../config.js';
import { listenUrl } from '../db/connections.js';
import type { Logger } from '../log.js';
import { createWaker, type Waker } from './waker.js';

// The skeleton shared by the outbox workers (callback sender, usage mailer): a waker on
// the outbox's NOTIFY channel, and a loop that passes over the outbox, waits to be
// woken, and backs off while the database cannot be reached.

/** An id for one worker of `kind`, unique across hosts and processes (lease owner, log context). */
export function workerId(kind: string): string {
  return `${hostname()}-${process.pid}-${kind}-${randomUUID().slice(0, 8)}`;
}

/** A waker on `channel`, listening before it is returned; `listener` names it in the logs. */
export async function outboxWaker(config: Config, channel: string, log: Logger, listener: string): Promise<Waker> {
  const waker = createWaker({
    url: listenUrl(config),
    channel,
    pollMs: Math.max(config.RUNBOX_POLL_MS, 1000),
    onError: (err) => log.warn({ err: err.message }, `${listener} listener lost its connection; reconnecting`),
  });
  await waker.ready();
  return waker;
}

export interface OutboxLoopOptions {
  waker: Waker;
  log: Logger;
  /** Names the outbox in the log line of a failed pass. */
  outbox: string;
  /**
   * One pass over the outbox. `reached()` says the database has answered (the backoff
   * starts over; a pass that resolves has reached it too). Resolves true to pass again
   * at once, false to wait to be woken.
   */
  pass: (reached: () => void) => Promise<boolean>;
  /** The worker's own clean-up, once the loop has ended and the waker is closed. */
  stopped: () => Promise<void> | void;
}

export interface OutboxLoop {
  /** Ends the loop after its current pass, then runs stopped(); every call gets the same promise. */
  stop(): Promise<void>;
}

/** Starts passing over the outbox at once. */
export function startOutboxLoop(o: OutboxLoopOptions): OutboxLoop {
  let stopping = false;
  const loop = (async () => {
    let failures = 0;
    const reached = () => {
      failures = 0;
    };
    while (!stopping) {
      try {
        const again = await o.pass(reached);
        failures = 0;
        if (again) continue;
      } catch (err) {
        failures++;
        o.log.warn({ err: (err as Error).message }, `${o.outbox} outbox unreachable`);
        await new Promise((r) => setTimeout(r, Math.min(100 * 2 ** failures, 10_000)));
        continue;
      }
      await o.waker.wait();
    }
  })();
  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        await o.waker.close();
        await loop;
        await o.stopped();
      })()),
  };
}
