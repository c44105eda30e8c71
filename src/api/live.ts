import type { ServerResponse } from 'node:http';
import type { Db } from '../db/connect.js';
import { createDoneWatcher, type DoneWatcher } from '../queue/done.js';
import { listen, type Listener } from '../queue/listen.js';
import { OUTPUT_CHANNEL, parseOutputMessage, type OutputMessage } from '../queue/output-channel.js';
import { internalErrorResult, type RunResult } from '../result.js';

// What the API host needs to answer while a run happens elsewhere: when a submission
// ends (one LISTEN for every waiting synchronous request and WebSocket run), its
// live output (WebSocket runs), and its stored result.

export interface OutputFeed {
  /** Calls `onMessage` with the submission's output messages; returns the unsubscribe. */
  subscribe(id: string, onMessage: (m: OutputMessage) => void): () => void;
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface LiveResults {
  done: DoneWatcher;
  outputs: OutputFeed;
  close(): Promise<void>;
}

function createOutputFeed(url: string): OutputFeed {
  const subscribers = new Map<string, (m: OutputMessage) => void>();
  const listener: Listener = listen({
    url,
    channel: OUTPUT_CHANNEL,
    onNotify: (payload) => {
      const m = parseOutputMessage(payload);
      if (m) subscribers.get(m.i)?.(m);
    },
  });
  return {
    subscribe: (id, onMessage) => {
      subscribers.set(id, onMessage);
      return () => {
        if (subscribers.get(id) === onMessage) subscribers.delete(id);
      };
    },
    ready: () => listener.ready(),
    close: () => listener.close(),
  };
}

export function createLiveResults(options: { url: string; db: Db; pollMs: number }): LiveResults {
  const done = createDoneWatcher(options);
  const outputs = createOutputFeed(options.url);
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
 * Returns false when the client went away: nobody to answer; the job runs to its
 * end without us and frees its slot like any other.
 */
export async function waitForRunEnd(res: ServerResponse, live: LiveResults, id: string): Promise<boolean> {
  const gone = new AbortController();
  const onClose = () => {
    if (!res.writableFinished) gone.abort(new Error('client went away'));
  };
  res.once('close', onClose);
  try {
    await live.done.waitFor(id, gone.signal);
    return true;
  } catch (err) {
    if (gone.signal.aborted) return false;
    throw err;
  } finally {
    res.off('close', onClose);
  }
}

/** The stored result of an ended submission; a failure without one reads as internal_error. */
export async function storedResult(db: Db, id: string): Promise<RunResult> {
  const row = await db
    .selectFrom('submissions')
    .select(['id', 'compiler', 'result', 'extra_params'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  if (row.result) return row.result as RunResult;
  return internalErrorResult(row, 'the run could not be completed');
}
