import { JOBS_CHANNEL } from './job.js';
import { listen } from './listen.js';

// Wakes the claim loop: LISTEN for new jobs, with a poll timer behind it for lost
// notifications and the time the connection is down. A runner also LISTENs on a channel
// of its own, on which an admission that took one of its wake tokens wakes it alone
// (src/queue/wake.ts): reason 'wake'.

export type WakeReason = 'notify' | 'wake' | 'poll' | 'kick' | 'closed';

export interface WakerOptions {
  /** Where to LISTEN; null: the poll alone wakes. */
  url: string | null;
  pollMs: number;
  channel?: string;
  /** The runner's own wake channel (wakeChannelOf), listened to on the same connection. */
  ownChannel?: string;
  /** The LISTEN on ownChannel is in place (again): the runner may hold wake tokens. */
  onOwnConnected?: () => void;
  /** The LISTEN connection went away: the runner's tokens should go. */
  onLost?: () => void;
  /** Backoff of reconnect attempts, doubling from min to max. */
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
  onError?: (err: Error) => void;
  onConnected?: () => void;
}

export interface Waker {
  /** Resolves at the next notification, poll tick, kick() or close(). */
  wait(): Promise<WakeReason>;
  /** Wakes the waiter now (a slot was freed). */
  kick(): void;
  /** True while the LISTEN connection is up. */
  readonly listening: boolean;
  /** Resolves once the first LISTEN is in place (or the waker is closed). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function createWaker(options: WakerOptions): Waker {
  // A wake that arrives while nobody waits is remembered, so a notification between
  // an empty claim and the next wait() is not lost.
  let pending: WakeReason | undefined;
  let waiter: ((r: WakeReason) => void) | undefined;

  const wake = (reason: WakeReason) => {
    if (waiter) {
      const w = waiter;
      waiter = undefined;
      w(reason);
    } else if (pending === undefined || reason === 'closed') {
      pending = reason;
    }
  };

  const pollTimer = setInterval(() => wake('poll'), options.pollMs);
  const backoff = {
    ...(options.reconnectMinMs !== undefined ? { reconnectMinMs: options.reconnectMinMs } : {}),
    ...(options.reconnectMaxMs !== undefined ? { reconnectMaxMs: options.reconnectMaxMs } : {}),
  };
  const own = options.ownChannel
    ? listen({
        url: options.url,
        channel: options.ownChannel,
        onNotify: () => wake('wake'),
        onLost: () => options.onLost?.(),
        ...(options.onOwnConnected ? { onConnected: options.onOwnConnected } : {}),
        ...backoff,
      })
    : undefined;
  const listener = listen({
    url: options.url,
    channel: options.channel ?? JOBS_CHANNEL,
    onNotify: () => wake('notify'),
    onLost: (err) => {
      if (err) options.onError?.(err);
      // Jobs may have arrived while we were not listening.
      wake('poll');
    },
    ...(options.onConnected ? { onConnected: options.onConnected } : {}),
    ...(options.reconnectMinMs !== undefined ? { reconnectMinMs: options.reconnectMinMs } : {}),
    ...(options.reconnectMaxMs !== undefined ? { reconnectMaxMs: options.reconnectMaxMs } : {}),
  });

  return {
    wait: () => {
      if (pending !== undefined) {
        const r = pending;
        if (r !== 'closed') pending = undefined;
        return Promise.resolve(r);
      }
      return new Promise<WakeReason>((resolve) => (waiter = resolve));
    },
    kick: () => wake('kick'),
    get listening() {
      return listener.listening;
    },
    ready: async () => {
      await Promise.all([listener.ready(), own?.ready()]);
    },
    close: async () => {
      clearInterval(pollTimer);
      wake('closed');
      await Promise.all([listener.close(), own?.close()]);
    },
  };
}
