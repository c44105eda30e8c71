import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// The machine a program is shown: the CPUs and memory it was given, not the host's, and
// no host-wide activity figures. What lxcfs does for containers, as files the launchers
// bind over /proc entries and a small /sys: glibc's CPU count (os.cpu_count, nproc's
// fallback, sysconf) reads /sys/devices/system/cpu/online, then /proc/stat; programs
// size caches by /proc/meminfo; /proc/loadavg, the /proc/stat counters, /proc/pressure
// and boot_id would let one run watch another's activity or identify the host.

export interface SandboxView {
  /** [path in the sandbox, host file]: bound read-only over the /proc entries. */
  procFiles: [string, string][];
  /** Host directory shown read-only as /sys. */
  sys: string;
}

/** The /proc entries the view replaces (where the host has them). */
export const VIEW_PROC_FILES = ['/proc/meminfo', '/proc/cpuinfo', '/proc/stat', '/proc/loadavg', '/proc/sys/kernel/random/boot_id'] as const;

const KiB = 1024;
/** One made-up boot id per runner process: not the host's. */
const bootId = randomUUID();

/** Views already written, by directory: every sandbox a runner prepares asks for one. */
const written = new Map<string, SandboxView>();

/** The view for `memoryBytes` and `cpus` CPUs, written under `root` on first use. */
export function sandboxView(root: string, memoryBytes: number, cpus: number): SandboxView {
  const dir = join(root, `view-m${memoryBytes}-c${cpus}`);
  const known = written.get(dir);
  if (known) return known;
  if (!existsSync(dir)) writeView(dir, memoryBytes, cpus);
  const view: SandboxView = {
    procFiles: VIEW_PROC_FILES.filter((p) => existsSync(p)).map((p) => [p, join(dir, 'proc', p.slice('/proc/'.length).replaceAll('/', '_'))]),
    sys: join(dir, 'sys'),
  };
  written.set(dir, view);
  return view;
}

function writeView(dir: string, memoryBytes: number, cpus: number): void {
  // Built beside and renamed into place: concurrent first uses never see half a view.
  const tmp = `${dir}.${process.pid}.${randomUUID()}`;
  const file = (rel: string, text: string) => {
    mkdirSync(join(tmp, rel, '..'), { recursive: true, mode: 0o755 });
    writeFileSync(join(tmp, rel), text, { mode: 0o644 });
  };
  file('proc/meminfo', meminfo(memoryBytes));
  file('proc/cpuinfo', cpuinfo(cpus));
  file('proc/stat', stat(cpus));
  file('proc/loadavg', '0.00 0.00 0.00 1/1 1\n');
  file('proc/sys_kernel_random_boot_id', `${bootId}\n`);
  const range = cpus === 1 ? '0' : `0-${cpus - 1}`;
  for (const f of ['online', 'possible', 'present']) file(`sys/devices/system/cpu/${f}`, `${range}\n`);
  for (let c = 0; c < cpus; c++) mkdirSync(join(tmp, `sys/devices/system/cpu/cpu${c}`), { recursive: true, mode: 0o755 });
  try {
    renameSync(tmp, dir);
  } catch (e) {
    if (!existsSync(dir)) throw e; // else another caller got there first
  }
}

/** The host's /proc/meminfo keys, every figure zero but the total (and free) memory. */
export function meminfo(memoryBytes: number): string {
  const kb = Math.floor(memoryBytes / KiB);
  const keep = new Set(['Hugepagesize']);
  const shown = new Set(['MemTotal', 'MemFree', 'MemAvailable']);
  let host: string[] = [];
  try {
    host = readFileSync('/proc/meminfo', 'utf8').trim().split('\n');
  } catch {
    host = ['MemTotal: 0 kB', 'MemFree: 0 kB', 'MemAvailable: 0 kB'];
  }
  return host
    .map((line) => {
      const m = /^([^:]+):\s*(\d+)(\s*kB)?$/.exec(line);
      if (!m) return line;
      const [, key, value, unit] = m;
      const v = shown.has(key!) ? kb : keep.has(key!) ? Number(value) : 0;
      return `${`${key}:`.padEnd(16)}${String(v).padStart(8)}${unit ? ' kB' : ''}`;
    })
    .join('\n') + '\n';
}

/** The first `cpus` processor entries of the host's /proc/cpuinfo, numbered from 0. */
export function cpuinfo(cpus: number): string {
  let blocks: string[] = [];
  try {
    blocks = readFileSync('/proc/cpuinfo', 'utf8').trim().split(/\n\s*\n/);
  } catch {
    blocks = [];
  }
  if (blocks.length === 0) blocks = ['processor\t: 0'];
  const out: string[] = [];
  for (let i = 0; i < cpus; i++) {
    const block = blocks[Math.min(i, blocks.length - 1)]!;
    out.push(block.replace(/^processor\s*:.*$/m, `processor\t: ${i}`));
  }
  return out.join('\n\n') + '\n\n';
}

/** /proc/stat with one line per CPU and every counter zero; btime stays the host's (start times need it). */
export function stat(cpus: number): string {
  let btime = '0';
  try {
    btime = /^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1] ?? '0';
  } catch {
    // zero
  }
  const zeros = ' 0 0 0 0 0 0 0 0 0 0';
  const lines = [`cpu ${zeros}`, ...Array.from({ length: cpus }, (_, i) => `cpu${i}${zeros}`)];
  lines.push('intr 0', 'ctxt 0', `btime ${btime}`, 'processes 0', 'procs_running 1', 'procs_blocked 0', 'softirq 0 0 0 0 0 0 0 0 0 0 0');
  return lines.join('\n') + '\n';
}
