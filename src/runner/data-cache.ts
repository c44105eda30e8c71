import { mkdirSync } from 'node:fs';
import { chmod, open, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from '../problems/test-data.js';

// Stored problems' test data on a runner host: a bounded on-disk cache of files named by
// their sha-256, filled from Postgres on first use. A name is its content, so a cached
// file is never stale and runner processes of a host can share the directory; a cold
// cache costs one fetch per file. The directory is root's (0700): a sandbox never sees
// it, and a run gets its own test's bytes only, as stdin or files of its stage. A test's
// input reaches its program as the cached file itself (file(): opened read-only by the
// fork server and passed as the program's stdin): files are 0644 so that the program can
// reopen its own stdin (/dev/stdin) read-only; no other path to them exists in a sandbox.

export interface DataCacheOptions {
  dir: string;
  maxBytes: number;
  /** The file of this hash from the store; undefined when it is gone. */
  fetch(hash: Buffer): Promise<Buffer | undefined>;
  /** Bytes also kept in memory (default 64 MiB). */
  memoryBytes?: number;
  /** How often a file's use is written to its mtime (default once a minute). */
  touchEveryMs?: number;
}

/** A cached file's mode: readable, so that a program given it as stdin can reopen it
 *  (/dev/stdin); the directory (0700) is what keeps everything but root out. */
const FILE_MODE = 0o644;
/** Evicting goes down to this share of the bound, so that a full cache does not evict at every fill. */
const EVICT_TO = 0.8;
/** The most recently used files are also kept in memory, up to this much: a problem
 *  judged again and again (every submission of a contest) reads no disk at all. */
const MEMORY_BYTES = 64 * 1024 * 1024;
/** A file's last use is written to its mtime (the eviction order) at most this often. */
const TOUCH_EVERY_MS = 60_000;

export class DataCache {
  private readonly fetching = new Map<string, Promise<Buffer>>();
  /** Bytes this process believes the directory holds (re-read from the directory when it evicts). */
  private bytes: number | null = null;
  private evicting: Promise<void> | null = null;
  readonly stats = { hits: 0, fetches: 0 };

  private made = false;
  /** Recently used files, oldest first (a Map iterates in insertion order). */
  private readonly memory = new Map<string, Buffer>();
  private memoryBytes = 0;
  private readonly touched = new Map<string, number>();

  private readonly memoryMaxBytes: number;
  private readonly touchEveryMs: number;

  constructor(private readonly options: DataCacheOptions) {
    this.memoryMaxBytes = options.memoryBytes ?? MEMORY_BYTES;
    this.touchEveryMs = options.touchEveryMs ?? TOUCH_EVERY_MS;
  }

  private remember(name: string, content: Buffer): void {
    if (content.length > this.memoryMaxBytes / 4) return;
    this.forget(name);
    this.memory.set(name, content);
    this.memoryBytes += content.length;
    for (const k of this.memory.keys()) {
      if (this.memoryBytes <= this.memoryMaxBytes) break;
      this.forget(k);
    }
  }

  private forget(name: string): void {
    const old = this.memory.get(name);
    if (!old) return;
    this.memory.delete(name);
    this.memoryBytes -= old.length;
  }

  /** The file of `hash` (of `size` bytes, as its test row says). Throws when the store no longer has it. */
  async get(hash: Buffer, size: number): Promise<Buffer> {
    // Made on first use: a runner that never judges a stored problem leaves no directory.
    if (!this.made) {
      mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
      this.made = true;
    }
    const name = hash.toString('hex');
    const path = join(this.options.dir, name);
    const inMemory = this.memory.get(name);
    if (inMemory && inMemory.length === size) {
      this.stats.hits++;
      this.remember(name, inMemory);
      await this.touch(name, path);
      return inMemory;
    }
    try {
      const content = await readFile(path);
      // A file of the wrong size (a crash mid-write is excluded by the rename, but a disk
      // can fail) is fetched again; its content is its name, so nothing else can be wrong.
      if (content.length === size) {
        this.stats.hits++;
        this.remember(name, content);
        await this.touch(name, path);
        return content;
      }
    } catch {
      // not cached
    }
    let pending = this.fetching.get(name);
    if (!pending) {
      pending = this.fill(hash, path).finally(() => this.fetching.delete(name));
      this.fetching.set(name, pending);
    }
    return pending;
  }

  /**
   * The path of the cached file of `hash` (of `size` bytes), on disk: fetched or written
   * back first when it is not (another process of the host may have evicted it). A path,
   * not bytes: a test's input given to its program as a file is never read here.
   */
  async file(hash: Buffer, size: number): Promise<string> {
    const name = hash.toString('hex');
    const path = join(this.options.dir, name);
    try {
      const s = await stat(path);
      if (s.isFile() && s.size === size) {
        this.stats.hits++;
        // Caches filled before files were made readable for /dev/stdin (0600).
        if ((s.mode & 0o044) !== 0o044) await chmod(path, FILE_MODE);
        await this.touch(name, path);
        return path;
      }
    } catch {
      // not cached
    }
    const content = await this.get(hash, size);
    const again = await stat(path).catch(() => null);
    if (!again || again.size !== size) await this.write(path, content);
    return path;
  }

  /** Marks the file used (its mtime orders eviction, across the host's processes), at most once a minute. */
  private async touch(name: string, path: string): Promise<void> {
    const now = Date.now();
    if (this.touchEveryMs > 0 && now - (this.touched.get(name) ?? 0) < this.touchEveryMs) return;
    this.touched.set(name, now);
    if (this.touched.size > 100_000) this.touched.clear();
    await utimes(path, new Date(now), new Date(now)).catch(() => {});
  }

  private async fill(hash: Buffer, path: string): Promise<Buffer> {
    this.stats.fetches++;
    const content = await this.options.fetch(hash);
    if (!content) throw new Error(`test data ${hash.toString('hex')} is no longer stored`);
    if (!sha256(content).equals(hash)) throw new Error(`test data ${hash.toString('hex')} does not match its hash`);
    await this.write(path, content);
    this.remember(hash.toString('hex'), content);
    this.touched.set(hash.toString('hex'), Date.now());
    this.bytes = (this.bytes ?? (await this.scanBytes())) + content.length;
    if (this.bytes > this.options.maxBytes) {
      this.evicting ??= this.evict().finally(() => (this.evicting = null));
      await this.evicting;
    }
    return content;
  }

  /** Written aside and renamed into place: a reader sees the whole file or none. */
  private async write(path: string, content: Buffer): Promise<void> {
    const temporary = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.part`;
    await writeFile(temporary, content, { mode: FILE_MODE });
    const handle = await open(temporary, 'r');
    await handle.sync().finally(() => handle.close());
    await rename(temporary, path);
  }

  private async scanBytes(): Promise<number> {
    return (await this.files()).reduce((n, f) => n + f.size, 0);
  }

  private async files(): Promise<{ path: string; size: number; usedMs: number }[]> {
    const names = await readdir(this.options.dir);
    const out: { path: string; size: number; usedMs: number }[] = [];
    for (const name of names) {
      const path = join(this.options.dir, name);
      try {
        const s = await stat(path);
        if (s.isFile()) out.push({ path, size: s.size, usedMs: s.mtimeMs });
      } catch {
        // removed meanwhile (another process evicting)
      }
    }
    return out;
  }

  /** Removes the least recently used files until the directory holds at most EVICT_TO of the bound. */
  private async evict(): Promise<void> {
    const files = (await this.files()).sort((a, b) => a.usedMs - b.usedMs);
    let total = files.reduce((n, f) => n + f.size, 0);
    for (const f of files) {
      if (total <= this.options.maxBytes * EVICT_TO) break;
      await unlink(f.path).catch(() => {});
      total -= f.size;
    }
    this.bytes = total;
  }
}
