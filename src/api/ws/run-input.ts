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
//
// Nothing is stored before the run is admitted: stdin that comes with or right after
// the run message waits here (bounded by the input limit) and is stored once admission
// has stored the run (`admitted`), or dropped with the run's refusal (`drop`). A
// connection's runs share a pace (StdinPace): at most so many statements (and NOTIFYs,
// which every runner hears) a second, what comes meanwhile merged into the next.

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Why input was not passed on: the caller words it for its protocol. */
export type InputRefusal = { reason: 'stdin_closed' } | { reason: 'input_limit'; limit: number; wouldBe: number };

/** One connection's statements of stored stdin: at most `perSecond` a second, across its runs. */
export class StdinPace {
  private nextAt = 0;

  constructor(private readonly perSecond: number) {}

  /** Resolves when the next statement may go. */
  async turn(): Promise<void> {
    const now = performance.now();
    const at = Math.max(now, this.nextAt);
    this.nextAt = at + 1000 / this.perSecond;
    if (at > now) await new Promise((r) => setTimeout(r, at - now));
  }
}

export class RunInput {
  private next = 0;
  private bytes: number;
  private closed = false;
  /** Written and not yet stored; the end of input once `closed`. */
  private pending = '';
  private endPending = false;
  private draining: Promise<void> | undefined;
  /** Stored only once the run exists: set by `admitted`. */
  private open = false;

  constructor(
    private readonly db: Db,
    readonly submissionId: string,
    upfrontInput: string,
    private readonly onError: (err: Error) => void,
    private readonly pace: StdinPace,
  ) {
    this.bytes = utf8Bytes(upfrontInput);
  }

  /** The run is admitted (its row exists): what waited is stored, and what follows. */
  admitted(): void {
    if (this.open) return;
    this.open = true;
    if (this.pending !== '' || this.endPending) this.kick();
  }

  /** Drops what waits and takes no more: the run was refused (or never reached admission), or is over. */
  drop(): void {
    this.closed = true;
    this.pending = '';
    this.endPending = false;
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
    if (!this.open) return;
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
      // Written between the loop's last look and here.
      if (this.pending !== '' || this.endPending) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending !== '' || this.endPending) {
      // Waiting for the connection's pace first: what comes meanwhile joins this statement.
      await this.pace.turn();
      const text = this.pending;
      this.pending = '';
      const chunks = splitOutput(text);
      for (const [k, d] of chunks.entries()) {
        if (k > 0) await this.pace.turn();
        if (!(await this.publish({ i: this.submissionId, n: this.next++, d }))) return;
      }
      if (this.pending === '' && this.endPending) {
        this.endPending = false;
        if (chunks.length > 0) await this.pace.turn();
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
