import type { Db } from '../db/connect.js';
import { splitOutput, type OutputBody } from '../queue/output-channel.js';
import { publishOutput } from '../queue/output-store.js';

// Publishes a WebSocket run's output as it is written (only the kept bytes: the
// sandbox calls onOutput with those alone). Chunks written while a NOTIFY is under
// way are merged into the next one, so a chatty program costs few round trips; the
// messages go out one at a time, in order. Each is written under the runner's claim of
// the run: once one is refused (the lease is gone) nothing more is sent, and `onLost` says so.
// Messages are numbered from 0 within the claim's attempt (publishOutput puts it on).

export interface OutputPublisher {
  push(stream: 'stdout' | 'stderr', chunk: Buffer): void;
  /**
   * Sends what is left and the end marker; resolves once they are out. A stream cut at
   * the retention limit drops its half character, as the result does.
   */
  finish(truncated?: { stdout: boolean; stderr: boolean }): Promise<void>;
}

export interface OutputClaim {
  runnerId: string;
  submissionId: string;
  attempt: number;
}

export function createOutputPublisher(db: Db, claim: OutputClaim, onError: (err: Error) => void, onLost: () => void): OutputPublisher {
  const { submissionId } = claim;
  // Per stream, so a character split across two writes is decoded whole.
  const decoders = { stdout: new TextDecoder('utf-8'), stderr: new TextDecoder('utf-8') };
  const pending: { s: 'stdout' | 'stderr'; d: string }[] = [];
  let seq = 0;
  let running: Promise<void> | undefined;
  let lost = false;

  // Stored as well as notified: an API host that missed a notification replays it.
  const notify = async (m: OutputBody) => {
    if (lost) return;
    if (await publishOutput(db, claim.runnerId, claim.attempt, m)) return;
    lost = true;
    pending.length = 0;
    onLost();
  };

  const drain = async () => {
    while (pending.length > 0) {
      const first = pending.shift()!;
      let text = first.d;
      while (pending[0]?.s === first.s) text += pending.shift()!.d;
      for (const d of splitOutput(text)) {
        try {
          await notify({ i: submissionId, n: seq++, s: first.s, d });
        } catch (err) {
          onError(err as Error);
        }
      }
    }
    running = undefined;
  };

  const add = (s: 'stdout' | 'stderr', text: string) => {
    // NUL cannot travel in jsonb results; the stream shows what the result will show.
    const d = text.replace(/\u0000/g, '\uFFFD');
    if (d === '') return;
    pending.push({ s, d });
    running ??= drain();
  };

  return {
    push: (stream, chunk) => add(stream, decoders[stream].decode(chunk, { stream: true })),
    finish: async (truncated) => {
      if (!truncated?.stdout) add('stdout', decoders.stdout.decode());
      if (!truncated?.stderr) add('stderr', decoders.stderr.decode());
      while (running) await running;
      await notify({ i: submissionId, n: seq, end: true }).catch((err: Error) => onError(err));
    },
  };
}
