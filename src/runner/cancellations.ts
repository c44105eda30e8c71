import type { Db } from '../db/connect.js';
import { CANCEL_CHANNEL, cancelledAmong } from '../queue/cancel.js';
import { listen } from '../queue/listen.js';

// Runs whose caller went away (src/queue/cancel.ts): the runner stops them within a
// moment. Told by NOTIFY runbox_cancel; after a reconnect it asks the database about
// its running jobs, since notifications sent meanwhile were lost, and so it does every
// `pollMs` while it is not listening (no LISTEN connection configured, or it is down).
// A notification that arrives just before the runner registers a job it has claimed is
// remembered.

const REMEMBERED = 1000;

export interface Cancellations {
  /** Whether the submission's caller went away (notified recently). */
  has(id: string): boolean;
  close(): Promise<void>;
}

export function watchCancellations(options: {
  url: string | null;
  pollMs: number;
  db: Db;
  running: () => string[];
  onCancel: (id: string) => void;
  onError?: (err: Error) => void;
}): Cancellations {
  const seen = new Set<string>();
  const cancel = (id: string) => {
    seen.add(id);
    if (seen.size > REMEMBERED) seen.delete(seen.values().next().value as string);
    options.onCancel(id);
  };
  const catchUp = () => {
    const running = options.running();
    if (running.length === 0) return;
    cancelledAmong(options.db, running)
      .then((ids) => ids.forEach((id) => !seen.has(id) && cancel(id)))
      .catch((err: Error) => options.onError?.(err));
  };
  const listener = listen({ url: options.url, channel: CANCEL_CHANNEL, onNotify: cancel, onConnected: catchUp });
  const poll = setInterval(() => {
    if (!listener.listening) catchUp();
  }, options.pollMs);
  poll.unref();
  return {
    has: (id) => seen.has(id),
    close: async () => {
      clearInterval(poll);
      await listener.close();
    },
  };
}
