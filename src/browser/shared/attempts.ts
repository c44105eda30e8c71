// The output chunks of a WebSocket run say their attempt (docs/api.md): a run taken over
// by another runner (the first lost its claim) runs again from the start and streams
// under a later attempt, which voids what was shown of the earlier one. The widget and
// the playground follow the rule through this.

export type AttemptStep =
  /** A chunk of the attempt being shown (or the first chunk of the run). */
  | 'show'
  /** The first chunk of a later attempt: clear what was shown, then show it. */
  | 'restart'
  /** A chunk of an earlier attempt: drop it. */
  | 'stale';

export class Attempts {
  private shown = 0;

  /** What to do with a chunk of `attempt` (absent from servers of an earlier release: 1). */
  step(attempt: unknown): AttemptStep {
    const a = typeof attempt === 'number' ? attempt : 1;
    if (a < this.shown) return 'stale';
    const restart = this.shown > 0 && a > this.shown;
    this.shown = a;
    return restart ? 'restart' : 'show';
  }
}
