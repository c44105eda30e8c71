import { readFileSync } from 'node:fs';

// Which CPUs a slot's programs run on: as many as the CPU limit allows (rounded up),
// taken from the runner's own CPUs so that the slots spread over them. The program's
// affinity and the sandbox's /sys and /proc views all show this count, so a program
// that sizes a worker pool by the core count fits the limits it was given.

let allowed: number[] | null = null;

/** The CPUs this process may run on (Cpus_allowed_list of /proc/self/status). */
export function allowedCpus(): number[] {
  if (allowed) return allowed;
  const line = readFileSync('/proc/self/status', 'utf8').split('\n').find((l) => l.startsWith('Cpus_allowed_list:'));
  allowed = line ? parseCpuList(line.split(':')[1]!.trim()) : [0];
  if (allowed.length === 0) allowed = [0];
  return allowed;
}

/** "0-3,6" → [0, 1, 2, 3, 6]. */
export function parseCpuList(list: string): number[] {
  const out: number[] = [];
  for (const part of list.split(',').filter(Boolean)) {
    const [a, b] = part.split('-').map(Number);
    if (!Number.isInteger(a) || (b !== undefined && !Number.isInteger(b))) throw new Error(`bad CPU list ${JSON.stringify(list)}`);
    for (let c = a!; c <= (b ?? a!); c++) out.push(c);
  }
  return out;
}

/** The CPUs of `slot` for a CPU limit of `cores`: a distinct run of the runner's CPUs per slot, wrapping. */
export function slotCpus(slot: number, cores: number, from: number[] = allowedCpus()): number[] {
  const n = Math.max(1, Math.min(from.length, Math.ceil(cores)));
  const start = (slot * n) % from.length;
  return Array.from({ length: n }, (_, i) => from[(start + i) % from.length]!).sort((x, y) => x - y);
}
