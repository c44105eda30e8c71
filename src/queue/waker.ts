import pg from 'pg';
import { clientConfig } from '../db/url.js';
import { JOBS_CHANNEL } from './job.js';

// Wakes the claim loop: a dedicated connection LISTENs for new jobs, and a poll timer
// covers lost notifications and the time the connection is down. When Postgres goes
// away the listener reconnects with capped exponential backoff.

export type WakeReason = 'notify' | 'poll' | 'kick' | 'closed';

export interface WakerOptions {
  url: string;
  pollMs: number;
  channel?: string;
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
  const channel = options.channel ?? JOBS_CHANNEL;
  const minMs = options.reconnectMinMs ?? 100;
  const maxMs = options.reconnectMaxMs ?? 10_000;
  let closed = false;
  let client: pg.Client | undefined;
  let listening = false;
  let backoffMs = minMs;
  let reconnectTimer: NodeJS.Timeout | undefined;
  // A wake that arrives while nobody waits is remembered, so a notification between
  // an empty claim and the next wait() is not lost.
  let pending: WakeReason | undefined;
  let waiter: ((r: WakeReason) => void) | undefined;
  let readyResolve: () => void = () => {};
  const readyPromise = new Promise<void>((r) => (readyResolve = r));

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

  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void connect();
    }, backoffMs);
    backoffMs = Math.min(backoffMs * 2, maxMs);
  };

  const connect = async () => {
    const c = new pg.Client({ ...clientConfig(options.url), application_name: 'runbox-waker' });
    client = c;
    let failed = false;
    const lost = (err?: Error) => {
      if (failed) return;
      failed = true;
      listening = false;
      if (err && !closed) options.onError?.(err);
      c.removeAllListeners('notification');
      void c.end().catch(() => {});
      if (!closed) {
        // Jobs may have arrived while we were not listening.
        wake('poll');
        scheduleReconnect();
      }
    };
    c.on('error', lost);
    c.on('end', () => lost());
    c.on('notification', (msg) => {
      if (msg.channel === channel) wake('notify');
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${c.escapeIdentifier(channel)}`);
      if (closed) {
        await c.end();
        return;
      }
      listening = true;
      backoffMs = minMs;
      options.onConnected?.();
      readyResolve();
    } catch (err) {
      lost(err as Error);
    }
  };

  void connect();

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
      return listening;
    },
    ready: () => readyPromise,
    close: async () => {
      closed = true;
      clearInterval(pollTimer);
      if (reconnectTimer) clearTimeout(reconnectTimer);
      readyResolve();
      wake('closed');
      listening = false;
      await client?.end().catch(() => {});
    },
  };
}
