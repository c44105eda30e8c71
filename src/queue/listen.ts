import pg from 'pg';
import { clientConfig } from '../db/url.js';

// LISTEN for notifications. Every listener of a process on one database URL shares ONE
// connection, whatever the channels (new jobs, run ends, cancellations, live output,
// input, key changes, the outboxes): a process holds its pool and this one connection,
// so a runner host's connections do not grow with what it listens to. The connection
// reconnects with capped exponential backoff when Postgres goes away. Notifications sent
// while it was down are lost, so users pair it with a poll and get onLost to re-check at
// once. With no URL (a pooler in transaction mode and no direct connection configured,
// src/db/connections.ts) nothing is listened to: `listening` stays false and users poll.

export interface ListenOptions {
  /** Where to LISTEN; null: nowhere (users poll). */
  url: string | null;
  channel: string;
  onNotify: (payload: string) => void;
  /** The connection went away (notifications may have been missed meanwhile). */
  onLost?: (err?: Error) => void;
  /** The LISTEN on this channel is in place (again). */
  onConnected?: () => void;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

export interface Listener {
  readonly listening: boolean;
  /** Resolves once the first LISTEN is in place (at once without a URL, or once closed). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** The application_name of the shared LISTEN connection (pg_stat_activity). */
export const LISTEN_APPLICATION_NAME = 'runbox-listen';

interface Subscriber {
  options: ListenOptions;
  listening: boolean;
  resolveReady: () => void;
}

const hubs = new Map<string, Hub>();

class Hub {
  private readonly subs = new Set<Subscriber>();
  private client: pg.Client | undefined;
  private connected = false;
  /** Channels the current connection LISTENs on. */
  private listened = new Set<string>();
  private syncing: Promise<void> = Promise.resolve();
  private reconnectTimer: NodeJS.Timeout | undefined;
  private backoffMs: number | undefined;

  constructor(private readonly url: string) {}

  add(sub: Subscriber): void {
    this.subs.add(sub);
    if (this.connected) this.sync();
    else if (!this.client && !this.reconnectTimer) void this.connect();
  }

  async remove(sub: Subscriber): Promise<void> {
    this.subs.delete(sub);
    sub.listening = false;
    sub.resolveReady();
    if (this.subs.size > 0) return;
    hubs.delete(this.url);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = undefined;
    const c = this.client;
    this.client = undefined;
    this.connected = false;
    await c?.end().catch(() => {});
  }

  private bounds(): { min: number; max: number } {
    let min = Infinity;
    let max = 0;
    for (const s of this.subs) {
      min = Math.min(min, s.options.reconnectMinMs ?? 100);
      max = Math.max(max, s.options.reconnectMaxMs ?? 10_000);
    }
    return { min: min === Infinity ? 100 : min, max: max || 10_000 };
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({ ...clientConfig(this.url), application_name: LISTEN_APPLICATION_NAME });
    this.client = c;
    this.listened = new Set();
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      c.removeAllListeners('notification');
      void c.end().catch(() => {});
      if (this.client !== c) return;
      this.client = undefined;
      this.connected = false;
      for (const s of this.subs) {
        s.listening = false;
        s.options.onLost?.(err);
      }
      this.scheduleReconnect();
    };
    c.on('error', lost);
    c.on('end', () => lost());
    c.on('notification', (msg) => {
      for (const s of this.subs) if (s.options.channel === msg.channel) s.options.onNotify(msg.payload ?? '');
    });
    try {
      await c.connect();
      if (this.client !== c) return void (await c.end().catch(() => {}));
      this.connected = true;
      this.backoffMs = undefined;
      this.sync();
      await this.syncing;
    } catch (err) {
      lost(err as Error);
    }
  }

  private scheduleReconnect(): void {
    if (this.subs.size === 0 || this.reconnectTimer) return;
    const { min, max } = this.bounds();
    const wait = this.backoffMs ?? min;
    this.backoffMs = Math.min(wait * 2, max);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, wait);
  }

  /** LISTENs on every channel wanted and not yet listened on, then tells the subscribers now served. */
  private sync(): void {
    const c = this.client;
    this.syncing = this.syncing.then(async () => {
      if (!c || this.client !== c || !this.connected) return;
      const wanted = [...new Set([...this.subs].map((s) => s.options.channel))].filter((ch) => !this.listened.has(ch));
      try {
        if (wanted.length > 0) {
          await c.query(wanted.map((ch) => `LISTEN ${c.escapeIdentifier(ch)}`).join('; '));
          for (const ch of wanted) this.listened.add(ch);
        }
      } catch {
        // The connection broke: its 'error' or 'end' reconnects.
        return;
      }
      if (this.client !== c) return;
      for (const s of this.subs) {
        if (s.listening || !this.listened.has(s.options.channel)) continue;
        s.listening = true;
        s.options.onConnected?.();
        s.resolveReady();
      }
    });
  }
}

export function listen(options: ListenOptions): Listener {
  let resolveReady: () => void = () => {};
  const ready = new Promise<void>((r) => (resolveReady = r));
  const sub: Subscriber = { options, listening: false, resolveReady };
  const url = options.url;
  if (url === null) {
    // Nothing to listen on: nothing will be heard, so nobody waits for it.
    resolveReady();
    return { listening: false, ready: () => ready, close: async () => {} };
  }
  let hub = hubs.get(url);
  if (!hub) hubs.set(url, (hub = new Hub(url)));
  hub.add(sub);
  let closed: Promise<void> | undefined;
  const own = hub;
  return {
    get listening() {
      return sub.listening;
    },
    ready: () => ready,
    close: () => (closed ??= own.remove(sub)),
  };
}
