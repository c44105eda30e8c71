import { discard, prepare, removalsSettled, type LaunchKey, type Prepared, type RunContext } from './run.js';

// Each slot keeps its next stage prepared (job cgroup made, launcher started, runbox-init
// waiting for its stage), so that a run's path holds only the program's own start. It is
// prepared for the launch key of the slot's last stage: a job's compile and run stages
// share an image and limits, and so do most runs that follow each other on a slot. A
// stage with another key calls the prepared one off and starts afresh.

/** Where a prepared sandbox waits: its slot, and which of the slot's sandboxes (its lane). */
const place = (key: Pick<LaunchKey, 'slot' | 'lane'>) => `${key.slot}/${key.lane}`;

export class WarmPool {
  private readonly ready = new Map<string, Promise<Prepared | null>>();
  private readonly soon = new Map<string, NodeJS.Immediate>();

  constructor(private readonly ctx: RunContext) {}

  /** The slot's prepared stage, if one is ready; it leaves the pool (runStage checks that it fits). */
  async take(slot: number, lane = 0): Promise<Prepared | undefined> {
    const at = place({ slot, lane });
    const entry = this.ready.get(at);
    // A refill still to come would only prepare what this stage now prepares itself.
    const soon = this.soon.get(at);
    if (soon) {
      clearImmediate(soon);
      this.soon.delete(at);
    }
    if (!entry) return undefined;
    this.ready.delete(at);
    return (await entry) ?? undefined;
  }

  /** Gives the slot a pooled sandbox back after its stage (it waits for the next); with
   *  `ready`, the slot's next stage waits for it to settle, and the sandbox goes if false. */
  put(p: Prepared, ready?: Promise<boolean>): void {
    const at = place(p.key);
    const soon = this.soon.get(at);
    if (soon) {
      clearImmediate(soon);
      this.soon.delete(at);
    }
    const old = this.ready.get(at);
    const usable = !ready
      ? Promise.resolve(p)
      : ready.then(
          async (ok) => {
            if (ok) return p;
            await discard(p).catch(() => {});
            return null;
          },
          async () => {
            await discard(p).catch(() => {});
            return null;
          },
        );
    this.ready.set(at, usable);
    if (old) void old.then((o) => (o ? discard(o) : undefined)).catch(() => {});
  }

  /** refill, on the next turn of the event loop (once per slot until then). */
  refillSoon(key: LaunchKey): void {
    const at = place(key);
    if (this.soon.has(at)) return;
    this.soon.set(at, setImmediate(() => {
      this.soon.delete(at);
      this.refill(key);
    }));
  }

  /** Starts preparing the slot's next stage for `key` in the background. */
  refill(key: LaunchKey): void {
    if (this.ready.has(place(key))) return;
    this.ready.set(
      place(key),
      prepare(this.ctx, key).then(
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
