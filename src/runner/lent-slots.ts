import type { Db } from '../db/connect.js';
import { LENT_SLOT_IDLE_MS } from '../limits.js';
import { runsWaiting } from '../queue/index.js';
import type { StdinFeed } from '../sandbox/spec.js';

// An interactive run claimed in a slot lent beyond its account's share of the runner
// (ClaimedJob.borrowed, src/queue/claim.ts) gives the slot back once it has waited on its
// user's input, nothing typed and nothing written, for LENT_SLOT_IDLE_MS while another
// account's run waits for a slot: it is stopped and its result says why. So one
// account's idle browsers may use every slot while nobody else needs one, and still
// starve no other account.

/** How often an idle lent run looks whether another account waits. */
const CHECK_MS = 1000;

export const LENT_SLOT_STOPPED = `stopped: it waited for input for ${LENT_SLOT_IDLE_MS / 1000} s in a slot lent beyond the account's share of the runner while another account's run needed it; run it again`;

export interface LentSlotWatch {
  /** The program wrote output: it is not idle. */
  touch(): void;
  /** The feed, each chunk typed counting as activity. */
  feed(inner: StdinFeed): StdinFeed;
  stop(): void;
}

export function watchLentSlot(options: { db: Db; accountId: string; onGiveBack: () => void; onError: (err: Error) => void }): LentSlotWatch {
  let last = Date.now();
  let looking = false;
  const timer = setInterval(() => {
    if (looking || Date.now() - last < LENT_SLOT_IDLE_MS) return;
    looking = true;
    runsWaiting(options.db, options.accountId)
      .then((waits) => {
        if (!waits || Date.now() - last < LENT_SLOT_IDLE_MS) return;
        clearInterval(timer);
        options.onGiveBack();
      }, options.onError)
      .finally(() => (looking = false));
  }, CHECK_MS);
  const touch = () => void (last = Date.now());
  return {
    touch,
    feed: (inner) => ({
      attach: (write, end) =>
        inner.attach((chunk) => {
          touch();
          write(chunk);
        }, end),
    }),
    stop: () => clearInterval(timer),
  };
}
