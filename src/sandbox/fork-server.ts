import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { constants as os } from 'node:os';
import { SANDBOX_OVERHEAD } from '../limits.js';
import type { StageCgroup } from './cgroups/types.js';

// Launchers are started by runbox-forkserver (native/forkserver/), a small process
// this one starts once, and the bytes of their streams move through it: Node forks
// itself for every child_process.spawn (copying the page tables of its whole heap, which
// blocked the event loop for milliseconds per stage), and six pipes per stage cost it
// more than the stage's policy does. The server's child joins the job's cgroups, sets
// rlimits and drops to the slot's ids before its exec; the server writes a stage's
// stdin and stage-in, keeps the first bytes of its output and counts the rest, and
// answers once every stream has ended. Timers, kills and verdicts stay here (run.ts),
// and so does every decision; like output, a pooled stage's process count is a counter
// the server reads and reports only once it passes the limit given.

/** Descriptors 6... of a started process: files the server opens for it (STAGE_PIPES is their first). */
export const STAGE_PIPES = 6;

/** Resources a started process's rlimits may set. */
export type RlimitName = 'cpu' | 'fsize' | 'nofile' | 'core' | 'nproc' | 'stack' | 'as';

/** What the server's child does before it executes argv[0]. */
export interface StartRequest {
  /** An absolute path and its command line. */
  argv: readonly string[];
  /** cgroup.procs files the child joins, as root. */
  join?: readonly string[];
  /** Files the server opens write-only, as root, for the child's descriptors 6... */
  files?: readonly string[];
  /** Soft and hard limits ('inf' for none). */
  rlimits?: readonly { resource: RlimitName; soft: number | 'inf'; hard: number | 'inf' }[];
  /** Drops to these ids (no supplementary groups, no_new_privs) after the above. */
  user?: { uid: number; gid: number };
}

/** What a stage's streams came to. */
export interface StageStreams {
  stdout: Buffer;
  stderr: Buffer;
  stdoutTotal: number;
  stderrTotal: number;
  stageOut: Buffer;
  /** Stage-out went past its bound (the rest was read and dropped). */
  stageOutOverflow: boolean;
  /** The launcher's own log (fd 5). */
  log: Buffer;
}

export interface StageIo {
  stdin: Buffer;
  /** A pooled stage's stdin as a file instead (SandboxSpec.stdinFile): the server opens
   *  it read-only and passes it on; `stdin` is then empty. */
  stdinFile?: string;
  stageIn: Buffer;
  keepBytes: number;
  floodBytes: number;
  stageOutBytes: number;
  logBytes: number;
  /** Kept output as it comes; when absent, output arrives only with the streams. */
  onChunk?: (stream: 'stdout' | 'stderr', bytes: Buffer) => void;
  /** stdout + stderr passed floodBytes (once). */
  onFlood: () => void;
  /** stdin stays open once `stdin` is written, for writeStdin, until endStdin (an interactive run). */
  holdStdin?: boolean;
  /** A pooled stage's process count, watched by the server: `file` (a cgroup.procs) is
   *  read every `everyMs` ms and `onOver` called once it lists more than `max`. */
  processes?: { file: string; max: number; everyMs: number; onOver: () => void };
}

/** How a stage's cgroup ended up once the server had reclaimed what it left charged. */
export interface Settled {
  /** Its cgroup directories are gone (else the caller removes them). */
  removed: boolean;
  /** The settle file's text then (the job's memory in use). */
  settled: string;
}

/** A pooled stage's end as the server reported it. */
export interface StageReport extends Settled {
  /** Its counter files' texts at its start and at its end. */
  before: string[];
  after: string[];
  /** Where the server reclaims the stage's charges on a thread of its own: when that has
   *  ended (removed and settled above are then not yet known); null if the server went. */
  reclaim?: Promise<Settled | null>;
}

/** A started process: its pid, how it ended, and its stage's streams through the server. */
export class StageProcess extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  private referenced = true;
  private io: { resolve: (s: StageStreams) => void; reject: (e: Error) => void; onChunk?: StageIo['onChunk']; onFlood: () => void; onCrowd?: () => void } | null = null;
  private streamsDone = false;
  /** A stage of a pooled sandbox: the fields of its `enter` request before the run's own. */
  enterFields: readonly string[] | null = null;
  /** A pooled stage's end as the server reported it. */
  report: StageReport | null = null;

  constructor(
    /** 0 for a stage of a pooled sandbox: its processes are in the sandbox's namespaces. */
    readonly pid: number,
    private readonly id: string,
    private readonly server: ForkServer,
  ) {
    super();
  }

  /** The server's name for this process (or stage). */
  get requestId(): string {
    return this.id;
  }

  get exited(): boolean {
    return this.exitCode !== null || this.signalCode !== null;
  }

  /** Called by the server when the process's exit is reported. */
  ended(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exited) return;
    this.exitCode = code;
    this.signalCode = signal;
    if (this.referenced) this.server.unhold();
    this.emit('exit', code, signal);
  }

  /** Sends the stage: stdin and stage-in. Settles once every stream of the process has ended. */
  run(io: StageIo): Promise<StageStreams> {
    if (this.io || this.streamsDone) return Promise.reject(new Error('this process has run already'));
    const done = new Promise<StageStreams>((resolve, reject) => {
      this.io = { resolve, reject, onFlood: io.onFlood, ...(io.onChunk ? { onChunk: io.onChunk } : {}), ...(io.processes ? { onCrowd: io.processes.onOver } : {}) };
    });
    this.server.hold();
    const watch = io.processes ? [io.processes.file, String(io.processes.max), String(io.processes.everyMs)] : ['', '0', '0'];
    const head = this.enterFields ? ['enter', ...this.enterFields.slice(0, 1), this.id, ...this.enterFields.slice(1), ...watch] : ['run', this.id];
    this.server.request([
      ...head, String(io.keepBytes), String(io.floodBytes), String(io.stageOutBytes), String(io.logBytes), io.onChunk ? '1' : '0',
      io.stdin, io.stageIn, io.holdStdin ? '1' : '0',
      ...(this.enterFields && io.stdinFile !== undefined ? [io.stdinFile] : []),
    ]);
    return done;
  }

  /** More input for a held stdin (run with holdStdin); dropped once the stage is over. */
  writeStdin(bytes: Buffer): void {
    if (!this.io || this.streamsDone || bytes.length === 0) return;
    this.server.request(['stdin', this.id, bytes]);
  }

  /** Joins this running stage's stdin and stdout to `other`'s (both run with holdStdin):
   *  the server writes each one's stdout to the other's stdin (an interactive test). */
  linkWith(other: StageProcess): void {
    if (!this.io || this.streamsDone || !other.io || other.streamsDone) return;
    this.server.request(['link', this.id, other.id]);
  }

  /** Closes a held stdin once what it was given is written. */
  endStdin(): void {
    if (!this.io || this.streamsDone) return;
    this.server.request(['eof', this.id]);
  }

  /** Calls the stage off: its pipes close (a launched runbox-init reads an empty stage
   *  archive and leaves). */
  discard(): void {
    if (this.io || this.streamsDone) return;
    this.streamsDone = true;
    this.server.request(['discard', this.id]);
    this.server.forget(this.id);
  }

  /** @internal from the server */
  chunk(stream: 'stdout' | 'stderr', bytes: Buffer): void {
    this.io?.onChunk?.(stream, bytes);
  }

  /** @internal from the server */
  flood(): void {
    this.io?.onFlood();
  }

  /** @internal from the server */
  crowd(): void {
    this.io?.onCrowd?.();
  }

  /** @internal from the server */
  streams(s: StageStreams | Error): void {
    const io = this.io;
    if (!io || this.streamsDone) return;
    this.streamsDone = true;
    this.server.unhold();
    this.server.forget(this.id);
    if (s instanceof Error) io.reject(s);
    else io.resolve(s);
  }

  /** Keeps this process alive until the started one has exited (a running stage). */
  ref(): void {
    if (!this.referenced && !this.exited) this.server.hold();
    this.referenced = true;
  }

  /** A launcher waiting for its stage must not keep an idle process alive. */
  unref(): void {
    if (this.referenced && !this.exited) this.server.unhold();
    this.referenced = false;
  }
}

interface Waiting {
  resolve: (pid: number) => void;
  reject: (e: Error) => void;
}

const errnoName = (n: number) => Object.entries(os.errno).find(([, v]) => v === n)?.[0] ?? `errno ${n}`;
const signalName = (n: number) => Object.entries(os.signals).find(([, v]) => v === n)?.[0] as NodeJS.Signals | undefined;

/** Frames both ways: u32 length, u32 field count, then u32 length + bytes per field.
 *  Returned as parts: a stage's files are written as they are, not copied into one buffer
 *  (fresh memory costs page faults, which dominate copying megabytes here). */
function frame(fields: readonly (string | Buffer)[]): Buffer[] {
  const parts = fields.map((f) => (typeof f === 'string' ? Buffer.from(f) : f));
  const head = Buffer.alloc(8 + 4 * parts.length);
  head.writeUInt32LE(4 + parts.reduce((n, p) => n + 4 + p.length, 0), 0);
  head.writeUInt32LE(parts.length, 4);
  const out: Buffer[] = [head.subarray(0, 8)];
  parts.forEach((p, i) => {
    const len = head.subarray(8 + 4 * i, 12 + 4 * i);
    len.writeUInt32LE(p.length);
    out.push(len, p);
  });
  return out;
}

export class ForkServer {
  private readonly child: ChildProcess;
  private readonly waiting = new Map<string, Waiting>();
  /** Started processes by pid (for exits) and by request id (for streams). */
  private readonly byPid = new Map<number, StageProcess>();
  private readonly byId = new Map<string, StageProcess>();
  /** Processes reported started whose object does not exist yet, with their exit if it
   *  came first (a launcher that failed at once). */
  private readonly starting = new Map<number, [number | null, NodeJS.Signals | null] | null>();
  /** Stages of pooled sandboxes under way, by request id (for their end). */
  private readonly stages = new Map<string, StageProcess>();
  /** Stages whose charges the server is reclaiming, by request id (for its `settled`). */
  private readonly reclaiming = new Map<string, (s: Settled | null) => void>();
  private seq = 0;
  private holds = 0;
  /** Whether the pipes are referenced now (setRef changes them only when this changes). */
  private referenced: boolean | null = null;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the frame at the head of `pending` needs in all (4 until its length is known). */
  private frameBytes = 4;
  private gone: Error | null = null;

  constructor(path: string) {
    this.child = spawn(path, [], { stdio: ['pipe', 'pipe', 'inherit'], env: {} });
    this.child.stdout!.on('data', (b: Buffer) => this.onData(b));
    const fail = (e: Error) => {
      if (this.gone) return;
      this.gone = e;
      for (const w of this.waiting.values()) w.reject(e);
      this.waiting.clear();
      // What it started dies with it (their parent-death signal).
      for (const s of this.byId.values()) s.streams(e);
      for (const s of this.byPid.values()) s.ended(null, 'SIGKILL');
      for (const s of this.stages.values()) s.ended(null, 'SIGKILL');
      this.stages.clear();
      for (const settle of this.reclaiming.values()) {
        this.holds--;
        settle(null);
      }
      this.reclaiming.clear();
      this.byId.clear();
      this.byPid.clear();
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

  /** @internal */
  hold(): void {
    this.holds++;
    this.setRef();
  }

  /** @internal */
  unhold(): void {
    this.holds--;
    this.setRef();
  }

  /** @internal */
  forget(id: string): void {
    this.byId.delete(id);
  }

  /** The server's pipes keep this process alive only while something is awaited. */
  private setRef(): void {
    const busy = this.holds > 0 || this.waiting.size > 0;
    if (busy === this.referenced) return;
    this.referenced = busy;
    for (const h of [this.child, this.child.stdout, this.child.stdin] as unknown as { ref(): void; unref(): void }[]) {
      if (busy) h.ref();
      else h.unref();
    }
  }

  /** @internal */
  request(fields: readonly (string | Buffer)[]): void {
    if (this.gone) throw this.gone;
    const stdin = this.child.stdin!;
    stdin.cork();
    for (const part of frame(fields)) stdin.write(part);
    stdin.uncork();
  }

  private onData(b: Buffer): void {
    this.pending.push(b);
    this.pendingBytes += b.length;
    // A large frame (a compile stage's files) arrives in many reads: join them once it
    // is whole, not at every read.
    if (this.pendingBytes < this.frameBytes) return;
    let buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    let at = 0;
    while (buf.length - at >= 4) {
      const len = buf.readUInt32LE(at);
      if (buf.length - at - 4 < len) break;
      this.onFrame(buf.subarray(at + 4, at + 4 + len));
      at += 4 + len;
    }
    buf = buf.subarray(at);
    this.pending = buf.length ? [buf] : [];
    this.pendingBytes = buf.length;
    this.frameBytes = buf.length >= 4 ? 4 + buf.readUInt32LE(0) : 4;
    this.setRef();
  }

  private onFrame(body: Buffer): void {
    const n = body.readUInt32LE(0);
    const f: Buffer[] = [];
    let at = 4;
    for (let k = 0; k < n; k++) {
      const len = body.readUInt32LE(at);
      f.push(body.subarray(at + 4, at + 4 + len));
      at += 4 + len;
    }
    const text = (k: number) => f[k]!.toString('latin1');
    const num = (k: number) => Number(text(k));
    switch (text(0)) {
      case 'exit': {
        const code = num(2);
        const how: [number | null, NodeJS.Signals | null] = code >= 0 ? [code, null] : [null, signalName(num(3)) ?? 'SIGKILL'];
        const started = this.byPid.get(num(1));
        if (started) {
          this.byPid.delete(num(1));
          started.ended(...how);
        } else if (this.starting.has(num(1))) this.starting.set(num(1), how);
        return;
      }
      case 'done': {
        const stage = this.stages.get(text(1));
        if (!stage) return;
        this.stages.delete(text(1));
        const counts = (f.length - 5) / 2;
        const id = text(1);
        stage.report = {
          removed: text(3) === '1',
          settled: text(4),
          before: f.slice(5, 5 + counts).map((b) => b.toString('latin1')),
          after: f.slice(5 + counts).map((b) => b.toString('latin1')),
          ...(text(3) === '2' ? { reclaim: new Promise<Settled | null>((resolve) => this.reclaiming.set(id, resolve)) } : {}),
        };
        // The slot's next stage may wait for the reclaim's end: the server stays referenced till then.
        if (stage.report.reclaim) this.hold();
        // A wait status: exited with (status >> 8) & 0xff, or killed by status & 0x7f.
        const status = num(2);
        const sig = status & 0x7f;
        if (sig === 0) stage.ended((status >> 8) & 0xff, null);
        else stage.ended(null, signalName(sig) ?? 'SIGKILL');
        return;
      }
      case 'settled': {
        const settle = this.reclaiming.get(text(1));
        if (!settle) return;
        this.reclaiming.delete(text(1));
        this.unhold();
        settle({ removed: text(2) === '1', settled: text(3) });
        return;
      }
      case 'started':
      case 'failed': {
        const stage = this.stages.get(text(1));
        if (stage) {
          // A stage the server could not enter: it never ran.
          this.stages.delete(text(1));
          stage.streams(new Error(`cannot enter the pooled sandbox (${f[3] ? text(3) : 'request'}): ${errnoName(num(2))}`));
          stage.ended(null, 'SIGKILL');
          return;
        }
        const w = this.waiting.get(text(1));
        if (!w) return;
        this.waiting.delete(text(1));
        if (text(0) === 'started') {
          this.starting.set(num(2), null);
          w.resolve(num(2));
        } else {
          const code = errnoName(num(2));
          w.reject(Object.assign(new Error(`cannot start the launcher (${f[3] ? text(3) : 'request'}): ${code}`), { code }));
        }
        return;
      }
      case 'chunk':
        // Fields are views of the frame, not copies: every read from the server's
        // stdout is a buffer of its own, and a frame in several is joined into a new one.
        this.byId.get(text(1))?.chunk(text(2) === '1' ? 'stdout' : 'stderr', f[3]!);
        return;
      case 'flood':
        this.byId.get(text(1))?.flood();
        return;
      case 'crowd':
        this.byId.get(text(1))?.crowd();
        return;
      case 'streams':
        this.byId.get(text(1))?.streams({
          stdoutTotal: num(2),
          stderrTotal: num(3),
          stageOutOverflow: text(4) === '1',
          stdout: f[5]!,
          stderr: f[6]!,
          stageOut: f[7]!,
          log: f[8]!,
        });
        return;
      default:
        return;
    }
  }

  /** Starts `req.argv[0]` with fresh pipes on 0-5 and `req.files` on 6... (see StartRequest).
   *  With `pooled`, descriptor 3 is the control socket of a pooled sandbox (`enter`). */
  async start(req: StartRequest, pooled = false): Promise<StageProcess> {
    if (this.gone) throw this.gone;
    const id = String(++this.seq);
    const list = (items: readonly string[] = []) => [String(items.length), ...items];
    const limits = (req.rlimits ?? []).map((r) => `${r.resource}=${r.soft}:${r.hard}`);
    const ids = req.user ? [String(req.user.uid), String(req.user.gid)] : ['', ''];
    // Fields travel NUL-terminated to the server, which hands them to execve as C strings.
    const fields = [pooled ? 'startenv' : 'start', id, ...list(req.join), ...list(req.files), ...list(limits), ...ids, ...req.argv];
    if (fields.some((a) => a.includes('\0'))) throw new Error('a command-line argument contains a NUL byte');
    const started = new Promise<number>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    this.request(fields);
    this.setRef();
    const pid = await started;
    const child = new StageProcess(pid, id, this);
    this.holds++;
    this.byId.set(id, child);
    const early = this.starting.get(pid);
    this.starting.delete(pid);
    if (early) child.ended(...early);
    else this.byPid.set(pid, child);
    this.setRef();
    return child;
  }

  /** A stage in the pooled sandbox `env` (started with `pooled`), sent with its run in
   *  one `enter` request: the server makes the stage's cgroup directories `dirs`, writes
   *  `writes`, reads `counterFiles` before (but those in the new directories) and after
   *  the stage (StageProcess.report), writes `drains` at its end (when `usageFile` reads
   *  more than SANDBOX_OVERHEAD.drainAboveBytes) before removing the directories and then
   *  reads `settleFile` (report.settled), and passes the stage's pipes, the directories'
   *  cgroup.procs and `joins` to the sandbox's init. The stage's 'exit' is its end, once
   *  nothing of it is left in the sandbox. */
  stage(env: StageProcess, user: { uid: number; gid: number }, cgroup: Pick<StageCgroup, 'dirs' | 'joins' | 'writes' | 'counterFiles' | 'drains' | 'usageFile' | 'settleFile'>): StageProcess {
    if (this.gone) throw this.gone;
    const id = String(++this.seq);
    const stage = new StageProcess(0, id, this);
    const list = (items: readonly string[]) => [String(items.length), ...items];
    stage.enterFields = [env.requestId, String(user.uid), String(user.gid), ...list(cgroup.dirs), ...list(cgroup.joins), ...list(cgroup.writes.flat()), ...list(cgroup.counterFiles), ...list(cgroup.drains.flat()), cgroup.usageFile, String(SANDBOX_OVERHEAD.drainAboveBytes), cgroup.settleFile];
    this.holds++;
    this.byId.set(id, stage);
    this.stages.set(id, stage);
    this.setRef();
    return stage;
  }

  /** Ends the server; what it started dies with it. */
  close(): void {
    this.child.stdin!.end();
  }
}

let server: ForkServer | null = null;

/** The pid of this process's fork server, if one is running (its CPU and its reaped
 *  children's are not in this process's children's figures: see bench/cpu.ts). */
export function forkServerPid(): number | undefined {
  return server?.alive ? server.pid : undefined;
}

/** This process's fork server, started on first use (again if it died). */
export function forkServer(path: string): ForkServer {
  if (!server || !server.alive) server = new ForkServer(path);
  return server;
}
