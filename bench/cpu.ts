import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import type { Db } from '../src/db/connect.js';
import { forkServerPid } from '../src/sandbox/fork-server.js';

// CPU time and database work behind a measured interval, steadier than wall time on a
// shared host: a process's own CPU and that of the children it has waited for (from
// /proc/<pid>/stat), the Postgres backends serving one database (from /proc of each
// backend), commits (pg_stat_database), statements sent (every query of node-pg is one
// round trip: it does not pipeline) and the event loop's longest blocks.

const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim() || '100');

export interface ProcCpu {
  /** The process itself, user + system, ms. */
  selfMs: number;
  /** Its children that it (or they, recursively) waited for, ms. */
  childrenMs: number;
}

export function procCpu(pid: number | 'self'): ProcCpu {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may itself hold spaces and parentheses.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  // utime, stime, cutime, cstime are fields 14-17 of the line, 12-15 after the name.
  return { selfMs: (f[11]! + f[12]!) * TICK_MS, childrenMs: (f[13]! + f[14]!) * TICK_MS };
}

/** This process as a runner: its own CPU, and as children both those it waited for and
 *  its fork server's, with the launchers that server waited for, and every process still
 *  alive below the server (the pooled sandboxes standing, whose CPU would reach the
 *  server's figures only once they exit). A process alive at one reading and reaped by
 *  the next is counted once: its whole CPU moves into its parent's children's figure. */
export function runnerCpu(): ProcCpu {
  const own = procCpu('self');
  const server = forkServerPid();
  if (server === undefined) return own;
  try {
    const s = procCpu(server);
    let live = 0;
    for (const pid of descendants(server)) {
      try {
        const d = procCpu(pid);
        live += d.selfMs + d.childrenMs;
      } catch {
        // ended meanwhile: its CPU is in its parent's children's figure
      }
    }
    return { selfMs: own.selfMs, childrenMs: own.childrenMs + s.selfMs + s.childrenMs + live };
  } catch {
    return own;
  }
}

/** Every living process below `root` (not `root` itself), from each process's parent in /proc. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // gone
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const c of children.get(pid) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(root);
  return out;
}

export function cpuDelta(a: ProcCpu, b: ProcCpu): ProcCpu {
  return { selfMs: b.selfMs - a.selfMs, childrenMs: b.childrenMs - a.childrenMs };
}

/** CPU ms of the backends of `db`'s database (those alive at both ends of the interval). */
export async function postgresCpu(db: Db): Promise<Map<number, number>> {
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, procCpu(pid).selfMs);
    } catch {
      // Gone already, or not readable here (another host): left out.
    }
  }
  return out;
}

export function postgresCpuDelta(a: Map<number, number>, b: Map<number, number>): number {
  let ms = 0;
  for (const [pid, after] of b) {
    const before = a.get(pid);
    if (before !== undefined) ms += after - before;
  }
  return ms;
}

/**
 * Counts every statement node-pg sends from this process until stop(), and among them
 * the commits of writes: admission calls (each its own transaction) and COMMITs.
 */
export function countStatements(): { count(): number; commits(): number; stop(): void } {
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  let n = 0;
  let c = 0;
  proto.query = function (this: unknown, ...args: unknown[]) {
    n++;
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    if (/runbox_admit\(|^\s*commit/i.test(text)) c++;
    return original.apply(this, args);
  };
  return {
    count: () => n,
    commits: () => c,
    stop: () => {
      proto.query = original;
    },
  };
}

/** The main thread's scheduler figures (/proc/<pid>/task/<pid>/schedstat): time on a
 *  CPU and time runnable but waiting for one, ms. An event loop's delay is the sum of the
 *  work it did and the waits: this tells the two apart on a saturated host. */
export function mainThreadSched(): { onCpuMs: number; waitMs: number } {
  const [run, wait] = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').trim().split(' ').map(Number);
  return { onCpuMs: run! / 1e6, waitMs: wait! / 1e6 };
}

/**
 * The event loop's own blocks, ms: a 1 ms timer's lateness at each turn, less the time
 * the main thread spent runnable but waiting for a core meanwhile (its schedstat run
 * delay). What is left is the loop's work and any sleep inside a synchronous call: time
 * the loop could not turn although it had a core. On a host whose cores the sandboxes
 * keep busy, the plain delay (eventLoopDelay) is mostly that wait.
 */
export function eventLoopOwnBlocks(): { stop(): { p50: number; p99: number; max: number; turns: number } } {
  const file = `/proc/${process.pid}/task/${process.pid}/schedstat`;
  const runDelayNs = () => Number(readFileSync(file, 'utf8').split(' ')[1]);
  const blocks: number[] = [];
  let last = performance.now();
  let lastWait = runDelayNs();
  const timer = setInterval(() => {
    const now = performance.now();
    const wait = runDelayNs();
    blocks.push(Math.max(0, now - last - 1 - (wait - lastWait) / 1e6));
    last = now;
    lastWait = wait;
  }, 1);
  return {
    stop: () => {
      clearInterval(timer);
      const sorted = blocks.sort((a, b) => a - b);
      const at = (q: number) => +(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0).toFixed(2);
      return { p50: at(0.5), p99: at(0.99), max: +(sorted.at(-1) ?? 0).toFixed(2), turns: sorted.length };
    },
  };
}

/** The event loop's delay over an interval (its own work and its waits for a core), ms (resolution 1 ms). */
export function eventLoopDelay(): { stop(): { p50: number; p99: number; max: number } } {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  return {
    stop: () => {
      h.disable();
      const ms = (ns: number) => +(ns / 1e6).toFixed(2);
      return { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
    },
  };
}
