import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { close as closeFd, constants, open } from 'node:fs';
import { Socket } from 'node:net';
import { constants as os } from 'node:os';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';

// Shims are started by runbox-forkserver (native/forkserver.c), a small process this
// one starts once, instead of by child_process.spawn: Node forks itself for every
// spawn, which copies the page tables of its whole heap and blocks the event loop for
// milliseconds per stage. The server makes the stage's pipes and forks the shim; this
// process opens the server's ends through /proc/<server>/fd/<n> (a pipe opened there is
// the same pipe), then lets the server close its copies, so every stream ends when the
// shim's side does.

/** The child's descriptors 0-6, as the child sees them: true where it reads. */
const CHILD_READS = [true, false, false, true, false, false, true] as const;
export const SHIM_PIPES = CHILD_READS.length;

export type ShimStream = Socket | Writable;

/** What run.ts needs of a started shim: the subset of a ChildProcess it used. */
export class ShimProcess extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  private referenced = true;
  private open: number;

  constructor(
    readonly pid: number,
    /** Descriptors 0-6 of the shim, from this side: writable where the shim reads. */
    readonly stdio: readonly ShimStream[],
    private readonly server: ForkServer,
  ) {
    super();
    this.open = stdio.length;
    for (const s of stdio) {
      s.on('error', () => {});
      s.once('close', () => {
        this.open--;
        this.maybeClosed();
      });
    }
  }

  get exited(): boolean {
    return this.exitCode !== null || this.signalCode !== null;
  }

  /** Called by the server when the shim's exit is reported. */
  ended(code: number | null, signal: NodeJS.Signals | null): void {
    this.exitCode = code;
    this.signalCode = signal;
    if (this.referenced) this.server.unhold();
    this.emit('exit', code, signal);
    this.maybeClosed();
  }

  /** Whether it has exited and every stream has closed ('close' has been emitted). */
  get closed(): boolean {
    return this.open === -1;
  }

  private maybeClosed(): void {
    if (this.open === 0 && this.exited) {
      this.open = -1;
      this.emit('close', this.exitCode, this.signalCode);
    }
  }

  /** Keeps this process alive until the shim has exited (a running stage). */
  ref(): void {
    if (!this.referenced && !this.exited) this.server.hold();
    this.referenced = true;
    for (const s of this.stdio) (s as Partial<Socket>).ref?.();
  }

  /** A shim waiting for its stage must not keep an idle process alive. */
  unref(): void {
    if (this.referenced && !this.exited) this.server.unhold();
    this.referenced = false;
    for (const s of this.stdio) (s as Partial<Socket>).unref?.();
  }
}

interface Waiting {
  resolve: (fds: { pid: number; fds: number[] }) => void;
  reject: (e: Error) => void;
}

// The callback form: a FileHandle would close its descriptor when collected.
const openFd = promisify(open);

const errnoName = (n: number) => Object.entries(os.errno).find(([, v]) => v === n)?.[0] ?? `errno ${n}`;

export class ForkServer {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<string, Waiting>();
  private readonly shims = new Map<number, ShimProcess>();
  /** Shims started whose streams are still being opened, and how they ended if they already have. */
  private readonly starting = new Map<number, { code: number | null; signal: NodeJS.Signals | null } | null>();
  private seq = 0;
  private holds = 0;
  private buffered = '';
  private gone: Error | null = null;

  constructor(path: string) {
    this.child = spawn(path, [], { stdio: ['pipe', 'pipe', 'inherit'], env: {} });
    this.child.stdout!.setEncoding('latin1');
    this.child.stdout!.on('data', (text: string) => this.onReplies(text));
    const fail = (e: Error) => {
      this.gone ??= e;
      for (const w of this.waiting.values()) w.reject(this.gone);
      this.waiting.clear();
      // Its shims die with it (their parent-death signal); their streams end by themselves.
      for (const s of this.shims.values()) s.ended(null, 'SIGKILL');
      this.shims.clear();
    };
    this.child.on('error', fail);
    this.child.on('exit', (code, signal) => fail(new Error(`runbox-forkserver exited (${code ?? signal})`)));
    this.child.stdin!.on('error', () => {});
    this.setRef();
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.gone === null;
  }

  hold(): void {
    this.holds++;
    this.setRef();
  }

  unhold(): void {
    this.holds--;
    this.setRef();
  }

  /** The server's pipes keep this process alive only while a reply is awaited. */
  private setRef(): void {
    const busy = this.holds > 0 || this.waiting.size > 0;
    const stdout = this.child.stdout as unknown as { ref(): void; unref(): void };
    const stdin = this.child.stdin as unknown as { ref(): void; unref(): void };
    if (busy) {
      this.child.ref();
      stdout.ref();
      stdin.ref();
    } else {
      this.child.unref();
      stdout.unref();
      stdin.unref();
    }
  }

  private send(fields: string[]): void {
    for (const f of fields) if (f.includes('\0')) throw new Error('a command-line argument contains a NUL byte');
    const body = Buffer.from(fields.map((f) => `${f}\0`).join(''));
    const head = Buffer.alloc(4);
    head.writeUInt32LE(body.length);
    this.child.stdin!.write(Buffer.concat([head, body]));
  }

  private onReplies(text: string): void {
    this.buffered += text;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const [kind, ...rest] = this.buffered.slice(0, nl).split(' ');
      this.buffered = this.buffered.slice(nl + 1);
      if (kind === 'exit') {
        const [pid, code, signal] = rest.map(Number) as [number, number, number];
        const how = { code: code >= 0 ? code : null, signal: code >= 0 ? null : (signalName(signal) ?? 'SIGKILL') };
        if (this.starting.has(pid)) this.starting.set(pid, how);
        const shim = this.shims.get(pid);
        if (!shim) continue;
        this.shims.delete(pid);
        shim.ended(how.code, how.signal);
        continue;
      }
      const w = this.waiting.get(rest[0]!);
      if (!w) continue;
      this.waiting.delete(rest[0]!);
      if (kind === 'spawned') {
        const [, pid, ...fds] = rest.map(Number);
        this.starting.set(pid!, null);
        w.resolve({ pid: pid!, fds });
      } else {
        const e = Number(rest[1]);
        w.reject(Object.assign(new Error(`cannot start the shim: ${errnoName(e)}`), { code: errnoName(e) }));
      }
    }
    this.setRef();
  }

  /** Starts `path` with fresh pipes on 0-6 and `files` (opened write-only by the server, as root) on 7... */
  async spawn(path: string, args: readonly string[], files: readonly string[] = []): Promise<ShimProcess> {
    if (this.gone) throw this.gone;
    const id = String(++this.seq);
    const started = new Promise<{ pid: number; fds: number[] }>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.send(['spawn', id, path, String(files.length), ...files, path, ...args]);
    this.setRef();
    const { pid, fds } = await started;
    const opened = await Promise.allSettled(fds.map((n, i) => this.openEnd(n, CHILD_READS[i]!)));
    const early = this.starting.get(pid);
    this.starting.delete(pid);
    // Released either way: a shim whose command line can never come reads its end and
    // leaves (see shim.c).
    this.send(['release', id]);
    const failed = opened.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (failed) {
      for (const o of opened) if (o.status === 'fulfilled') o.value.destroy();
      throw failed.reason;
    }
    const streams = opened.map((o) => (o as PromiseFulfilledResult<ShimStream>).value);
    const shim = new ShimProcess(pid, streams, this);
    this.holds++;
    if (early) shim.ended(early.code, early.signal);
    else this.shims.set(pid, shim);
    this.setRef();
    return shim;
  }

  private async openEnd(fd: number, childReads: boolean): Promise<ShimStream> {
    const path = `/proc/${this.child.pid}/fd/${fd}`;
    try {
      // Non-blocking: opening a pipe's write end fails (ENXIO) rather than waits when
      // nobody reads it any more, and libuv wants its descriptors non-blocking anyway.
      const fd = await openFd(path, (childReads ? constants.O_WRONLY : constants.O_RDONLY) | constants.O_NONBLOCK);
      try {
        return new Socket({ fd, readable: !childReads, writable: childReads });
      } catch (e) {
        closeFd(fd, () => {});
        throw e;
      }
    } catch (e) {
      if (!childReads || (e as NodeJS.ErrnoException).code !== 'ENXIO') throw e;
      // The shim is gone already: writes go nowhere.
      const dead = new Writable({ write: (_c, _e, cb) => cb() });
      dead.destroy();
      return dead;
    }
  }

  /** Ends the server; its shims die with it. */
  close(): void {
    this.child.stdin!.end();
  }
}

function signalName(n: number): NodeJS.Signals | undefined {
  return (Object.entries(os.signals).find(([, v]) => v === n)?.[0] as NodeJS.Signals | undefined);
}

let server: ForkServer | null = null;

/** The pid of this process's fork server, if one is running (its CPU and its reaped
 *  shims' are not in this process's children's figures: see bench/cpu.ts). */
export function forkServerPid(): number | undefined {
  return server?.alive ? server.pid : undefined;
}

/** This process's fork server, started on first use (again if it died). */
export function forkServer(path: string): ForkServer {
  if (!server || !server.alive) server = new ForkServer(path);
  return server;
}
