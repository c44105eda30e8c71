import { existsSync, statSync } from 'node:fs';

// What a program sees of /dev and /proc, the same under every launcher. bubblewrap's
// `--dev` makes the /dev below; nsjail is given the same nodes, links and mounts.

/** Device nodes in /dev, bound from the host's. */
export const DEV_NODES = ['null', 'zero', 'full', 'random', 'urandom', 'tty'] as const;

/** Symbolic links in /dev: [name, target]. */
export const DEV_LINKS: readonly (readonly [string, string])[] = [
  ['fd', '/proc/self/fd'],
  ['stdin', '/proc/self/fd/0'],
  ['stdout', '/proc/self/fd/1'],
  ['stderr', '/proc/self/fd/2'],
  ['ptmx', 'pts/ptmx'],
  ['core', '/proc/kcore'],
];

/** The devpts instance at /dev/pts (a private one per sandbox). */
export const DEVPTS_OPTIONS = 'newinstance,ptmxmode=0666,mode=0620';

/** Its options with the sandbox's cap on open terminals: nsjail mounts it with them;
 *  under bubblewrap runbox-init does (--devpts, see native/init/main.c). */
export const devptsOptions = (terminals: number) => `${DEVPTS_OPTIONS},max=${terminals}`;

// /proc files and folders that describe the host rather than the program (as container
// runtimes mask them): the kernel command line (which can carry secrets), kernel
// memory and symbols, keyrings, timers, devices and buses. Files read as /dev/null on
// a nodev mount (EACCES); folders are empty and read-only.
const PROC_MASKED_FILES = [
  'cmdline', 'kcore', 'kallsyms', 'keys', 'key-users', 'timer_list', 'timer_stats', 'sched_debug', 'latency_stats',
  'sysrq-trigger', 'config.gz', 'bootconfig', 'kpagecount', 'kpageflags', 'kpagecgroup', 'iomem', 'ioports',
  'interrupts', 'vmallocinfo', 'slabinfo', 'modules',
] as const;
// /proc/pressure: host-wide stall figures, a timing side channel on other runs.
const PROC_MASKED_DIRS = ['acpi', 'scsi', 'asound', 'bus', 'irq', 'driver', 'fs', 'pressure'] as const;

export interface ProcMasks {
  files: string[];
  dirs: string[];
}

let masks: ProcMasks | null = null;

/** The masks that apply on this host: a mount needs its target, and /proc inside the
 *  sandbox has the same global entries as the host's. Files only the host's root may
 *  read (0400: timer_list, kpage*, slabinfo…) need none: no program can open them, and in
 *  a pooled sandbox's user namespace nsjail cannot make them mount targets. Probed once. */
export function procMasks(): ProcMasks {
  const othersRead = (p: string) => {
    try {
      return (statSync(p).mode & 0o004) !== 0;
    } catch {
      return false;
    }
  };
  masks ??= {
    files: PROC_MASKED_FILES.map((f) => `/proc/${f}`).filter(othersRead),
    dirs: PROC_MASKED_DIRS.map((d) => `/proc/${d}`).filter((p) => existsSync(p)),
  };
  return masks;
}
