import pg from 'pg';
import { clientConfig } from '../db/url.js';

// A dedicated connection LISTENing on one channel, reconnecting with capped exponential
// backoff when Postgres goes away. Notifications sent while it was down are lost, so
// users pair it with a poll and get onLost to re-check at once.

export interface ListenOptions {
  url: string;
  channel: string;
  onNotify: (payload: string) => void;
  /** The connection went away (notifications may have been missed meanwhile). */
  onLost?: (err?: Error) => void;
  onConnected?: () => void;
  reconnectMinMs?: number;
  reconnectMaxMs?: number;
}

export interface Listener {
  readonly listening: boolean;
  /** Resolves once the first LISTEN is in place (or the listener is closed). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export function listen(options: ListenOptions): Listener {
  const minMs = options.reconnectMinMs ?? 100;
  const maxMs = options.reconnectMaxMs ?? 10_000;
  let closed = false;
  let client: pg.Client | undefined;
  let listening = false;
  let backoffMs = minMs;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let readyResolve: () => void = () => {};
  const readyPromise = new Promise<void>((r) => (readyResolve = r));

  const scheduleReconnect = () => {
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      void connect();
    }, backoffMs);
    backoffMs = Math.min(backoffMs * 2, maxMs);
  };

  const connect = async () => {
    const c = new pg.Client({ ...clientConfig(options.url), application_name: `runbox-listen-${options.channel}` });
    client = c;
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      listening = false;
      c.removeAllListeners('notification');
      void c.end().catch(() => {});
      if (!closed) {
        options.onLost?.(err);
        scheduleReconnect();
      }
    };
    c.on('error', lost);
    c.on('end', () => lost());
    c.on('notification', (msg) => {
      if (msg.channel === options.channel) options.onNotify(msg.payload ?? '');
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${c.escapeIdentifier(options.channel)}`);
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
    get listening() {
      return listening;
    },
    ready: () => readyPromise,
    close: async () => {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      readyResolve();
      listening = false;
      await client?.end().catch(() => {});
    },
  };
}
