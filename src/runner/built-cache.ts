import { createHash } from 'node:crypto';
import type { StagePlan } from '../program/plan.js';

// Checkers and interactors built once: their run stage (the compiled files and argv) by
// the hash of their sources and compiler (the image's real directory included, so an
// updated image builds afresh). A problem's checker is built at its first judged run on
// a runner process and reused by every later one; kept in memory, the least recently
// used dropped past a bound.

const MAX_BYTES = 128 * 1024 * 1024;

export class BuiltCache {
  private readonly entries = new Map<string, { run: StagePlan; bytes: number }>();
  private bytes = 0;
  readonly stats = { hits: 0, builds: 0 };

  static key(parts: unknown): string {
    return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
  }

  get(key: string): StagePlan | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    // Re-inserted: a Map iterates in insertion order, so the oldest use comes first.
    this.entries.delete(key);
    this.entries.set(key, hit);
    this.stats.hits++;
    return hit.run;
  }

  put(key: string, run: StagePlan): void {
    this.stats.builds++;
    const bytes = run.files.reduce((n, f) => n + f.content.length, 0);
    const old = this.entries.get(key);
    if (old) this.bytes -= old.bytes;
    this.entries.set(key, { run, bytes });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.bytes <= MAX_BYTES || k === key) break;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }
}
