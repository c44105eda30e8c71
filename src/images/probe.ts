import { execa } from 'execa';
import { existsSync } from 'node:fs';
import type { CompilerRecipe } from '../compilers/recipe.js';
import { BASE_ENV } from '../sandbox/spec.js';

// The real toolchain version of an image, read by running the recipe's probe inside it.
// Build-time only: the tree comes straight from Debian's packages, so chroot is enough.

/** The first dotted version number in the probe's output (stdout, then stderr). */
export function versionFromProbe(output: string): string | undefined {
  for (const line of output.split('\n')) {
    const m = /\b(\d+\.\d+(?:\.\d+)?)/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/** chroot lives in /usr/sbin, which the probe's clean PATH does not name. */
function chrootBinary(): string {
  return ['/usr/sbin/chroot', '/usr/bin/chroot', '/sbin/chroot'].find((p) => existsSync(p)) ?? 'chroot';
}

export async function probeVersion(rootfs: string, compiler: CompilerRecipe): Promise<{ version: string; output: string }> {
  const result = await execa(chrootBinary(), [rootfs, ...compiler.probe], {
    env: { ...BASE_ENV, HOME: '/tmp', TMPDIR: '/tmp', ...compiler.env },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
    stdin: 'ignore',
    all: true,
  });
  const output = `${result.stdout}\n${result.stderr}`.trim();
  if (result.exitCode !== 0) throw new Error(`probe ${compiler.probe.join(' ')} failed (exit ${result.exitCode ?? result.signal ?? 'none'}): ${result.shortMessage ?? ''} ${output.slice(0, 500)}`);
  const version = versionFromProbe(output);
  if (!version) throw new Error(`probe ${compiler.probe.join(' ')} printed no version: ${output.slice(0, 500)}`);
  return { version, output };
}
