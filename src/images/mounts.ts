import { readFileSync } from 'node:fs';

// debootstrap mounts /proc and /sys (and in containers binds /dev) inside the tree it
// builds. Removing a tree with such a mount still attached would reach the host's own
// files, so every removal of a work tree checks this first.

function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));
}

/** Mount points at or below path, deepest first. */
export function mountsUnder(path: string): string[] {
  const prefix = path.endsWith('/') ? path : `${path}/`;
  const points = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => unescape(line.split(' ')[4] ?? ''))
    .filter((p) => p === path || p.startsWith(prefix));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}
