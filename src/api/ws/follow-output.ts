import type { LiveResults } from '../live.js';
import type { OutputMessage } from '../../queue/output-channel.js';

// The live output of one run on a WebSocket, in order and once each: messages are
// numbered by the runner within the run's attempt, notifications may come out of order
// or twice (a replay repeats what arrived live), and the end marker says how many there
// were. A run taken over by another runner (the first lost its lease) streams again
// from 0 under a later attempt: from its first message on, what comes of an earlier
// attempt is dropped, and the chunks say their attempt so that a client drops what it
// showed of the earlier one. Subscribed before the submission exists, so no output can
// be missed.

/** After the run's end is seen, how long to wait for output messages still on their way. */
const OUTPUT_GRACE_MS = 1000;

export type OutputChunk = { attempt: number; seq: number; stream: 'stdout' | 'stderr'; data: string };

export interface FollowedOutput {
  /** Once the run has ended: what notifications missed comes from the store, and the end marker is waited for (briefly). */
  drain(): Promise<void>;
  stop(): void;
}

export function followOutput(live: LiveResults, submissionId: string, onChunk: (chunk: OutputChunk) => void): FollowedOutput {
  // The attempt being relayed (0: none yet) and its next message number.
  let attempt = 0;
  let expected = 0;
  let endAt: number | null = null;
  let early = new Map<number, OutputMessage>();
  let endSeen: (() => void) | undefined;
  const complete = () => endAt !== null && expected > endAt;
  const relay = (m: OutputMessage) => {
    if (m.a < attempt) return;
    if (m.a > attempt) {
      attempt = m.a;
      expected = 0;
      endAt = null;
      early = new Map();
    }
    if (m.n < expected) return;
    early.set(m.n, m);
    for (let next = early.get(expected); next; next = early.get(expected)) {
      early.delete(expected);
      if ('end' in next) endAt = next.n;
      else onChunk({ attempt, seq: next.n, stream: next.s, data: next.d });
      expected++;
    }
    if (complete()) endSeen?.();
  };
  const stop = live.outputs.subscribe(submissionId, relay);
  return {
    drain: async () => {
      await live.outputs.replay(submissionId, { attempt, seq: expected }).catch(() => {});
      if (complete()) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([new Promise<void>((r) => (endSeen = r)), new Promise((r) => (timer = setTimeout(r, OUTPUT_GRACE_MS)))]);
      clearTimeout(timer);
    },
    stop,
  };
}
