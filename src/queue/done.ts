import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { RunResult } from '../result.js';
import { DONE_CHANNEL } from './job.js';
import { listen } from './listen.js';

// Waiting for submissions to end (synchronous runs, callback delivery): one LISTEN
// connection per process for every waiter, plus a poll behind it for notifications
// lost while the connection was down. The notification carries the final state, so a
// waiter is released without a query; ends notified shortly before anyone waited are
// remembered for a while, so a submission admitted while the LISTEN was already in
// place needs no look-up at all (waitFor's `admittedAt`). A finished run's notification
// may carry its result (src/queue/complete.ts notifyDone); it is kept for a waiter of
// this process to take (`takeResult`), which then needs no query for it either.

export type FinalState = 'finished' | 'failed';

export interface DoneWatcher {
  /** Resolves with the final state once the submission is finished or failed; rejects with the signal's reason on abort. */
  waitFor(id: string, signal?: AbortSignal, options?: WaitOptions): Promise<FinalState>;
  /** The result a waiter here was notified with, once (undefined: look it up). */
  takeResult(id: string): EndedRun | undefined;
  /** Resolves once the LISTEN is in place (until then, only polls notice ends). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/** A finished run as its notification carried it: the result, and extra_params as stored (JSON text). */
export interface EndedRun {
  result: RunResult;
  extraParamsJson: string | null;
}

export interface WaitOptions {
  /**
   * performance.now() taken before the submission was stored. If the LISTEN has been in
   * place since then, its end cannot have been missed, and the first look-up is skipped.
   */
  admittedAt?: number;
}

/** Ends remembered for waiters that come after the notification. */
const RECENT_MAX = 4096;
const RECENT_MS = 60_000;
/** Notified results kept for this process's waiters to take (normally at once). */
const RESULTS_MAX = 256;

export interface DoneWatcherOptions {
  /** Where to LISTEN; null: waiting submissions are only looked up every pollMs. */
  url: string | null;
  db: Db;
  /** How often waiting submissions are also looked up directly. */
  pollMs: number;
}

export function createDoneWatcher(options: DoneWatcherOptions): DoneWatcher {
  const { db } = options;
  const waiters = new Map<string, Set<(state: FinalState) => void>>();

  const recent = new Map<string, { state: FinalState; at: number }>();
  // Payloads of notified results (JSON text), only for ids someone here waits on.
  const results = new Map<string, string>();
  // performance.now() when the current LISTEN was in place; undefined while it is not.
  let listeningSince: number | undefined;

  const remember = (id: string, state: FinalState) => {
    const now = performance.now();
    recent.set(id, { state, at: now });
    for (const [oldId, e] of recent) {
      if (recent.size <= RECENT_MAX && e.at > now - RECENT_MS) break;
      recent.delete(oldId);
    }
  };

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
    onNotify: (payload) => {
      // id:state, or id:finished:{"r": result, "x": extra_params} (the JSON holds colons too).
      const first = payload.indexOf(':');
      const second = first < 0 ? -1 : payload.indexOf(':', first + 1);
      const id = first < 0 ? payload : payload.slice(0, first);
      const state = first < 0 ? undefined : payload.slice(first + 1, second < 0 ? undefined : second);
      if (state === 'finished' || state === 'failed') {
        if (second >= 0 && waiters.has(id)) {
          results.set(id, payload.slice(second + 1));
          for (const oldId of results.keys()) {
            if (results.size <= RESULTS_MAX) break;
            results.delete(oldId);
          }
        }
        remember(id, state);
        settle(id, state);
      } else if (waiters.has(id)) {
        void check([id]);
      }
    },
    onConnected: () => (listeningSince = performance.now()),
    onLost: () => {
      listeningSince = undefined;
      void checkAll();
    },
  });
  const pollTimer = setInterval(() => void checkAll(), options.pollMs);

  return {
    waitFor: (id, signal, waitOptions) =>
      new Promise<FinalState>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason);
        const known = recent.get(id);
        if (known) return resolve(known.state);
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
        // one after it by the notification. Not needed when the LISTEN was in place
        // before the submission existed: its end is then notified (or remembered).
        const since = listeningSince;
        const admittedAt = waitOptions?.admittedAt;
        if (since === undefined || admittedAt === undefined || since > admittedAt || !listener.listening) void check([id]);
      }),
    takeResult: (id) => {
      const text = results.get(id);
      if (text === undefined) return undefined;
      results.delete(id);
      try {
        const { r, x } = JSON.parse(text) as { r: RunResult; x: string | null };
        return { result: r, extraParamsJson: x };
      } catch {
        return undefined;
      }
    },
    ready: () => listener.ready(),
    close: async () => {
      clearInterval(pollTimer);
      await listener.close();
    },
  };
}
