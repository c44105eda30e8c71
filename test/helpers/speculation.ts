import { readFileSync } from 'node:fs';

// What a sandboxed program must see in /proc/self/status for the speculation controls,
// given what a plain host process sees. The words are the kernel's (fs/proc/array.c):
// a control the kernel hands to each task reads "thread …" (store bypass) or
// "conditional …" (indirect branch), and runbox-init forces both on for the program, so
// it reads the forced form whatever the host's own processes chose; every other state
// ("vulnerable", "not vulnerable", "globally mitigated", "always enabled", "always
// disabled", "not affected", "unsupported", "unknown") is the kernel's or the CPU's for
// every task, and the program sees it unchanged.

export type SpeculationLines = { store_bypass: string | null; indirect_branch: string | null };

/** The two values of a status file's Speculation lines (null where the kernel prints none). */
export function parseSpeculation(status: string): SpeculationLines {
  const value = (key: string) => {
    const line = status.split('\n').find((l) => l.startsWith(`${key}:`));
    return line === undefined ? null : line.slice(key.length + 1).trim();
  };
  return { store_bypass: value('Speculation_Store_Bypass'), indirect_branch: value('SpeculationIndirectBranch') };
}

/** What the program must see, from what a host process sees. */
export function expectedInSandbox(host: SpeculationLines): SpeculationLines {
  const forced = (v: string | null, perTask: string, force: string) => (v !== null && v.startsWith(perTask) ? force : v);
  return {
    store_bypass: forced(host.store_bypass, 'thread ', 'thread force mitigated'),
    indirect_branch: forced(host.indirect_branch, 'conditional ', 'conditional force disabled'),
  };
}

/** This host's own process's lines. */
export const hostSpeculation = (): SpeculationLines => parseSpeculation(readFileSync('/proc/self/status', 'utf8'));
