import type { LiveResults } from '../live.js';
import type { OutputMessage } from '../../queue/output-channel.js';

// The live output of one run on a WebSocket, in order and once each: messages are
// numbered by the runner, notifications may come out of order or twice (a replay
// repeats what arrived live), and the end marker says how many there were. Subscribed
// before the submission exists, so no output can be missed.

/** After the run's end is seen, how long to wait for output messages still on their way. */
const OUTPUT_GRACE_MS = 1000;

export type OutputChunk = { seq: number; stream: 'stdout' | 'stderr'; data: string };

export interface FollowedOutput {
  /** Once the run has ended: what notifications missed comes from the store, and the end marker is waited for (briefly). */
  drain(): Promise<void>;
  stop(): void;
}

export function followOutput(live: LiveResults, submissionId: string, onChunk: (chunk: OutputChunk) => void): FollowedOutput {
  let expected = 0;
  let endAt: number | null = null;
  let endSeen: () => void = () => {};
  const ended = new Promise<void>((r) => (endSeen = r));
  const early = new Map<number, OutputMessage>();
  const relay = (m: OutputMessage) => {
    if (m.n < expected) return;
    early.set(m.n, m);
    for (let next = early.get(expected); next; next = early.get(expected)) {
      early.delete(expected);
      if ('end' in next) endAt = next.n;
      else onChunk({ seq: next.n, stream: next.s, data: next.d });
      expected++;
    }
    if (endAt !== null && expected > endAt) endSeen();
  };
  const stop = live.outputs.subscribe(submissionId, relay);
  return {
    drain: async () => {
      await live.outputs.replay(submissionId, expected).catch(() => {});
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ended, new Promise((r) => (timer = setTimeout(r, OUTPUT_GRACE_MS)))]);
      clearTimeout(timer);
    },
    stop,
  };
}
