import type { Db } from '../db/connect.js';
import { INPUT_CHANNEL, parseInputMessage, storedInput, type InputMessage } from '../queue/input-channel.js';
import { listen } from '../queue/listen.js';
import { REQUEST_LIMITS } from '../limits.js';
import type { StdinFeed } from '../sandbox/spec.js';

// The runner's side of interactive runs: one LISTEN on runbox_input for the whole runner,
// and a stdin feed per running interactive job that hands the program each chunk in
// order, once, then closes its stdin at the end marker. A feed reads the stored input
// when it starts (what was typed before the job started) and again after the listener
// reconnects (notifications sent meanwhile were lost), and polls the table while the
// listener is down; numbering makes them agree: each chunk is written once, in order.

/** While the listener is down, how often open feeds read the stored input. */
const POLL_MS = 500;

export interface InputFeeds {
  /** The stdin feed of a submission, registered until its stage is over; `upfrontBytes` of its input were written first. */
  feed(id: string, upfrontBytes?: number): StdinFeed;
  close(): Promise<void>;
}

interface Open {
  next: number;
  early: Map<number, InputMessage>;
  write: (b: Buffer) => void;
  end: () => void;
  bytes: number;
  ended: boolean;
}

export function watchInput(options: { url: string | null; db: Db; onError?: (err: Error) => void }): InputFeeds {
  const open = new Map<string, Open>();

  const deliver = (m: InputMessage) => {
    const o = open.get(m.i);
    if (!o || o.ended || m.n < o.next) return;
    o.early.set(m.n, m);
    for (let next = o.early.get(o.next); next; next = o.early.get(o.next)) {
      o.early.delete(o.next);
      o.next++;
      if ('eof' in next) {
        o.ended = true;
        o.end();
        return;
      }
      const bytes = Buffer.from(next.d, 'utf8');
      // The API keeps a run's input within the input limit; this holds whatever the rows say.
      // The program sees the end of its input rather than a cut line.
      if (o.bytes + bytes.length > REQUEST_LIMITS.inputMaxBytes) {
        o.ended = true;
        o.end();
        return;
      }
      o.bytes += bytes.length;
      o.write(bytes);
    }
  };

  const catchUp = (id: string) => {
    const o = open.get(id);
    if (!o) return;
    storedInput(options.db, id, o.next)
      .then((ms) => ms.forEach(deliver))
      .catch((err: Error) => options.onError?.(err));
  };

  const listener = listen({
    url: options.url,
    channel: INPUT_CHANNEL,
    onNotify: (payload) => {
      const m = parseInputMessage(payload);
      if (m) deliver(m);
    },
    onConnected: () => {
      for (const id of open.keys()) catchUp(id);
    },
  });
  const poll = setInterval(() => {
    if (!listener.listening) for (const id of open.keys()) catchUp(id);
  }, POLL_MS);
  poll.unref();

  return {
    feed: (id, upfrontBytes = 0) => ({
      attach(write, end) {
        const o: Open = { next: 0, early: new Map(), write, end, bytes: upfrontBytes, ended: false };
        open.set(id, o);
        catchUp(id);
        return () => {
          if (open.get(id) === o) open.delete(id);
        };
      },
    }),
    close: async () => {
      clearInterval(poll);
      await listener.close();
    },
  };
}
