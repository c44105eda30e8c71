import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { DONE_CHANNEL } from './job.js';
import { listen } from './listen.js';

// Waiting for submissions to end (synchronous runs, callback delivery): one LISTEN
// connection per process for every waiter, plus a poll behind it for notifications
// lost while the connection was down.

export type FinalState = 'finished' | 'failed';

export interface DoneWatcher {
  /** Resolves with the final state once the submission is finished or failed; rejects with the signal's reason on abort. */
  waitFor(id: string, signal?: AbortSignal): Promise<FinalState>;
  /** Resolves once the LISTEN is in place (until then, only polls notice ends). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface DoneWatcherOptions {
  url: string;
  db: Db;
  /** How often waiting submissions are also looked up directly. */
  pollMs: number;
}

export function createDoneWatcher(options: DoneWatcherOptions): DoneWatcher {
  const { db } = options;
  const waiters = new Map<string, Set<(state: FinalState) => void>>();

  const settle = (id: string, state: FinalState) => {
    const set = waiters.get(id);
    if (!set) return;
    waiters.delete(id);
    for (const resolve of set) resolve(state);
  };

  const check = async (ids: string[]) => {
    if (ids.length === 0) return;
    try {
      const { rows } = await sql<{ id: string; state: FinalState }>`
        SELECT id::text, state FROM submissions WHERE id = ANY(${ids}::uuid[]) AND state IN ('finished', 'failed')
      `.execute(db);
      for (const r of rows) settle(r.id, r.state);
    } catch {
      // Database unreachable: the next poll tries again.
    }
  };
  const checkAll = () => check([...waiters.keys()]);

  const listener = listen({
    url: options.url,
    channel: DONE_CHANNEL,
    onNotify: (id) => {
      if (waiters.has(id)) void check([id]);
    },
    onLost: () => void checkAll(),
  });
  const pollTimer = setInterval(() => void checkAll(), options.pollMs);

  return {
    waitFor: (id, signal) =>
      new Promise<FinalState>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        let set = waiters.get(id);
        if (!set) waiters.set(id, (set = new Set()));
        const onAbort = () => {
          set.delete(done);
          if (set.size === 0 && waiters.get(id) === set) waiters.delete(id);
          reject(signal!.reason);
        };
        const done = (state: FinalState) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(state);
        };
        set.add(done);
        signal?.addEventListener('abort', onAbort, { once: true });
        // Registered first, then looked up: an end before registration is seen here,
        // one after it by the notification.
        void check([id]);
      }),
    ready: () => listener.ready(),
    close: async () => {
      clearInterval(pollTimer);
      await listener.close();
    },
  };
}
