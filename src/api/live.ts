import type { ServerResponse } from 'node:http';
import type { Db } from '../db/connect.js';
import { cancelSubmission } from '../queue/cancel.js';
import { createDoneWatcher, type DoneWatcher } from '../queue/done.js';
import type { ApiLog } from './route.js';
import { listen, type Listener } from '../queue/listen.js';
import { OUTPUT_CHANNEL, parseOutputMessage, type OutputMessage } from '../queue/output-channel.js';
import { type OutputPosition, storedOutput, storedOutputFrom } from '../queue/output-store.js';
import { sql } from 'kysely';
import { resultFor, type Asker } from '../problems/feedback.js';
import { internalErrorResult, presentResult, type PresentOptions, type RunResult } from '../result.js';

// What the API host needs to answer while a run happens elsewhere: when a submission
// ends (one LISTEN for every waiting synchronous request and WebSocket run), its
// live output (WebSocket runs), and its stored result.

export interface OutputFeed {
  /** Calls `onMessage` with the submission's output messages (repeats possible: dedupe on (a, n); earlier attempts' possible: drop them); returns the unsubscribe. */
  subscribe(id: string, onMessage: (m: OutputMessage) => void): () => void;
  /** Hands the subscriber of `id` every stored message of the run's latest attempt from `from` on (what notifications may have missed). */
  replay(id: string, from?: OutputPosition): Promise<void>;
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface LiveResults {
  done: DoneWatcher;
  outputs: OutputFeed;
  close(): Promise<void>;
}

/** While nothing is listened to, how often the stored output of live runs is read (interactive sessions want it soon). */
const OUTPUT_POLL_MS = 250;

function createOutputFeed(url: string | null, db: Db, reconnectMinMs?: number): OutputFeed {
  const subscribers = new Map<string, (m: OutputMessage) => void>();
  // The next message (attempt, number) of each subscribed run that a poll asks for.
  const polledFrom = new Map<string, OutputPosition>();
  const deliver = (messages: OutputMessage[]) => {
    for (const m of messages) {
      const sub = subscribers.get(m.i);
      if (!sub) continue;
      const at = polledFrom.get(m.i) ?? { attempt: 0, seq: 0 };
      if (m.a > at.attempt || (m.a === at.attempt && m.n >= at.seq)) polledFrom.set(m.i, { attempt: m.a, seq: m.n + 1 });
      sub(m);
    }
  };
  const replay = async (ids: string[], from?: OutputPosition) => deliver(await storedOutput(db, ids, from));
  let lost = false;
  let polling = false;
  const poll = setInterval(() => {
    if (listener.listening || polling || subscribers.size === 0) return;
    polling = true;
    // Each run from where the last poll left it: no notification says what came since.
    storedOutputFrom(db, new Map([...subscribers.keys()].map((id) => [id, polledFrom.get(id) ?? { attempt: 0, seq: 0 }])))
      .then(deliver)
      .catch(() => {
        // The database is unreachable: the next tick tries again.
      })
      .finally(() => (polling = false));
  }, OUTPUT_POLL_MS);
  poll.unref();
  const listener: Listener = listen({
    url,
    channel: OUTPUT_CHANNEL,
    ...(reconnectMinMs !== undefined ? { reconnectMinMs } : {}),
    onNotify: (payload) => {
      const m = parseOutputMessage(payload);
      if (m) deliver([m]);
    },
    onLost: () => (lost = true),
    // Chunks notified while the connection was down come back from the store.
    onConnected: () => {
      if (!lost) return;
      lost = false;
      replay([...subscribers.keys()]).catch(() => {
        // The database is unreachable: the session replays once its run has ended.
      });
    },
  });
  return {
    subscribe: (id, onMessage) => {
      subscribers.set(id, onMessage);
      return () => {
        if (subscribers.get(id) !== onMessage) return;
        subscribers.delete(id);
        polledFrom.delete(id);
      };
    },
    replay: (id, from) => replay([id], from),
    ready: () => listener.ready(),
    close: async () => {
      clearInterval(poll);
      await listener.close();
    },
  };
}

export function createLiveResults(options: { url: string | null; db: Db; pollMs: number; reconnectMinMs?: number }): LiveResults {
  const done = createDoneWatcher(options);
  const outputs = createOutputFeed(options.url, options.db, options.reconnectMinMs);
  return {
    done,
    outputs,
    close: async () => {
      await Promise.all([done.close(), outputs.close()]);
    },
  };
}

/**
 * Waits until the submission has ended, for as long as the HTTP client is there.
 * Returns false when the client went away: nobody to answer, so the run is cancelled
 * rather than left to hold one of the account's slots (it stays counted: it started).
 */
export async function waitForRunEnd(
  res: ServerResponse,
  live: LiveResults,
  id: string,
  db: Db,
  log?: ApiLog,
  /** performance.now() before the submission was stored: lets the wait skip its first look-up (src/queue/done.ts). */
  admittedAt?: number,
): Promise<boolean> {
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort(new Error('client went away'));
  };
  res.once('close', onClose);
  try {
    await live.done.waitFor(id, gone.signal, admittedAt === undefined ? {} : { admittedAt });
    return true;
  } catch (err) {
    if (!gone.signal.aborted) throw err;
    await cancelSubmission(db, id).catch((e: Error) => log?.error({ err: e.message, submission: id }, 'could not cancel a run'));
    return false;
  } finally {
    res.off('close', onClose);
  }
}

async function storedRow(db: Db, id: string, live?: LiveResults): Promise<{ result: RunResult; extraParamsJson: string | null }> {
  // A waiter of this process may have been handed the result with the run's end.
  const notified = live?.done.takeResult(id);
  if (notified) return notified;
  const row = await db
    .selectFrom('submissions')
    .select(['id', 'compiler', 'result', 'extra_params', sql<string | null>`extra_params::text`.as('extra_params_json')])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const result = (row.result as RunResult | null) ?? internalErrorResult(row, 'the run could not be completed');
  return { result, extraParamsJson: row.extra_params_json };
}

/** The stored result of an ended submission as `asker` may see it (src/problems/feedback.ts); a failure without one reads as internal_error. */
export async function storedResult(db: Db, id: string, asker: Asker, live?: LiveResults): Promise<RunResult> {
  return resultFor(db, asker, (await storedRow(db, id, live)).result);
}

/** The same, as the JSON text every channel answers with (src/result.ts presentResult: field order, extra_params as sent). */
export async function storedResultJson(db: Db, id: string, asker: Asker, options: Omit<PresentOptions, 'extraParamsJson'> = {}, live?: LiveResults): Promise<string> {
  const { result, extraParamsJson } = await storedRow(db, id, live);
  return presentResult(await resultFor(db, asker, result), { ...options, extraParamsJson });
}
