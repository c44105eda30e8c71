import type { StageLinkSide } from './spec.js';

// Two stages joined by their stdio: an interactive test's program and its interactor,
// each in a sandbox of its own (lanes 0 and 1 of the slot), run at the same time. The fork
// server writes each one's stdout to the other's stdin as it comes (native/forkserver,
// `link`), so neither the runner's event loop nor a copy through it is on the path of a
// question and its answer. Either side ending ends the other's stdin: a dead partner
// never leaves a stage waiting for input that cannot come.

interface Joinable {
  linkWith(other: unknown): void;
  endStdin(): void;
}

export class StageLink {
  private readonly stages: (Joinable | null)[] = [null, null];
  private readonly over = [false, false];

  /** The side of lane `n` (0: the program, 1: the interactor). */
  side(n: 0 | 1): StageLinkSide {
    const other = (1 - n) as 0 | 1;
    return {
      started: (stage) => {
        this.stages[n] = stage;
        const partner = this.stages[other];
        if (partner && !this.over[other]) stage.linkWith(partner);
        // The partner ended before this side started: nothing will ever come.
        else if (this.over[other]) stage.endStdin();
      },
      ended: () => {
        if (this.over[n]) return;
        this.over[n] = true;
        // Its partner's stdin ends (the server does so too when the stdout it relays ends;
        // this covers a side that never started or never was joined).
        this.stages[other]?.endStdin();
      },
    };
  }
}
