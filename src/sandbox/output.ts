// Counts one output stream: keeps its first `keepBytes`, counts and drops the rest.

export class OutputCounter {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte seen, kept or not. */
  total = 0;

  constructor(private readonly keepBytes: number) {}

  /** Adds a chunk; returns the part that was kept (empty when past the cap). */
  push(chunk: Buffer): Buffer {
    this.total += chunk.length;
    const room = this.keepBytes - this.kept;
    if (room <= 0) return Buffer.alloc(0);
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
    return part;
  }

  get truncated(): boolean {
    return this.total > this.keepBytes;
  }

  get bytes(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }
}
