import { RUN_LIMITS } from '../limits.js';
import { discard, jobLimits, prepare, removalsSettled, usable, type Prepared, type RunContext } from './run.js';

// Each slot keeps its next stage prepared (job cgroup made, shim joined and waiting),
// so that a run does not wait for the kernel's cgroup migration. Prepared with the
// default limits; a stage with other limits is prepared afresh instead.

const DEFAULT_JOB_LIMITS = jobLimits(RUN_LIMITS);

export class WarmPool {
  private readonly ready = new Map<number, Promise<Prepared | null>>();

  constructor(private readonly ctx: RunContext) {}

  /** The slot's prepared stage, if one is ready and still usable; it leaves the pool. */
  async take(slot: number): Promise<Prepared | undefined> {
    const entry = this.ready.get(slot);
    // A refill still to come would only prepare what this stage now prepares itself.
    const soon = this.soon.get(slot);
    if (soon) {
      clearImmediate(soon);
      this.soon.delete(slot);
    }
    if (!entry) return undefined;
    this.ready.delete(slot);
    const p = await entry;
    if (!p) return undefined;
    if (usable(p, DEFAULT_JOB_LIMITS)) return p;
    await discard(p).catch(() => {});
    return undefined;
  }

  private readonly soon = new Map<number, NodeJS.Immediate>();

  /** refill, once the caller has taken the stage's outcome (and sent its result on its
   *  way): starting the shim blocks the event loop for a few milliseconds. */
  refillSoon(slot: number): void {
    if (this.soon.has(slot)) return;
    this.soon.set(slot, setImmediate(() => {
      this.soon.delete(slot);
      this.refill(slot);
    }));
  }

  /** Starts preparing the slot's next stage in the background. */
  refill(slot: number): void {
    if (this.ready.has(slot)) return;
    this.ready.set(
      slot,
      prepare(this.ctx, DEFAULT_JOB_LIMITS).then(
        (p) => {
          p.child.unref();
          return p;
        },
        () => null,
      ),
    );
  }

  /** Calls off every prepared stage and removes its job cgroup, and waits for the
   *  removal of finished stages' job cgroups; later runs prepare anew. */
  async close(): Promise<void> {
    for (const t of this.soon.values()) clearImmediate(t);
    this.soon.clear();
    const entries = [...this.ready.values()];
    this.ready.clear();
    await Promise.all(entries.map(async (e) => {
      const p = await e;
      if (p) await discard(p).catch(() => {});
    }));
    await removalsSettled();
  }
}
