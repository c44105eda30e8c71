import type { Db } from '../../db/connect.js';
import { REQUEST_LIMITS } from '../../limits.js';
import { publishInput, type InputMessage } from '../../queue/input-channel.js';
import { splitOutput } from '../../queue/output-channel.js';

// The API side of one interactive run's stdin: what the client sends is passed on in
// the order it arrived, cut into NOTIFY-sized chunks, numbered and stored for the runner
// (src/queue/input-channel.ts), one statement at a time so a failure cannot leave a
// later chunk ahead of a missing one. What arrives while a statement is under way is
// merged into the next, so a client typing a byte per message costs few statements.
// The run's stdin in all (its up-front input included) stays within the input limit.

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Why input was not passed on: the caller words it for its protocol. */
export type InputRefusal = { reason: 'stdin_closed' } | { reason: 'input_limit'; limit: number; wouldBe: number };

export class RunInput {
  private next = 0;
  private bytes: number;
  private closed = false;
  /** Written and not yet stored; the end of input once `closed`. */
  private pending = '';
  private endPending = false;
  private draining: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    readonly submissionId: string,
    upfrontInput: string,
    private readonly onError: (err: Error) => void,
  ) {
    this.bytes = utf8Bytes(upfrontInput);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Passes `data` on, then closes stdin when `eof`. Input past the limit is not written
   * at all, and stdin is closed: the program sees its end rather than a cut line.
   */
  write(data: string | undefined, eof: boolean): InputRefusal | null {
    if (this.closed) return { reason: 'stdin_closed' };
    if (data !== undefined && data !== '') {
      const size = utf8Bytes(data);
      if (this.bytes + size > REQUEST_LIMITS.inputMaxBytes) {
        this.end();
        return { reason: 'input_limit', limit: REQUEST_LIMITS.inputMaxBytes, wouldBe: this.bytes + size };
      }
      this.bytes += size;
      this.pending += data;
      this.kick();
    }
    if (eof) this.end();
    return null;
  }

  /** Closes stdin (once), after what was written. */
  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.endPending = true;
    this.kick();
  }

  /** Resolves once everything written so far is stored (or has failed). */
  async settled(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private kick(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      // Written between the loop's last look and here.
      if (this.pending !== '' || this.endPending) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending !== '' || this.endPending) {
      const text = this.pending;
      this.pending = '';
      for (const d of splitOutput(text)) if (!(await this.publish({ i: this.submissionId, n: this.next++, d }))) return;
      if (this.pending === '' && this.endPending) {
        this.endPending = false;
        await this.publish({ i: this.submissionId, n: this.next++, eof: true });
      }
    }
  }

  /** Stores one message; false when it could not be, and then nothing more is passed on. */
  private async publish(m: InputMessage): Promise<boolean> {
    try {
      await publishInput(this.db, m);
      return true;
    } catch {
      // One more try: the runner waits for a missing chunk (until the run's timeout).
      await new Promise((r) => setTimeout(r, 200));
      try {
        await publishInput(this.db, m);
        return true;
      } catch (err) {
        // Later chunks would only queue behind the missing one: stdin takes no more.
        this.closed = true;
        this.pending = '';
        this.endPending = false;
        this.onError(err as Error);
        return false;
      }
    }
  }
}
