import { execa } from 'execa';
import { existsSync } from 'node:fs';
import type { CompilerRecipe, LibraryRecipe } from '../compilers/recipe.js';
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

/** chroot and unshare live in /usr/sbin or /usr/bin, which the probe's clean PATH may not name. */
function hostTool(name: string): string {
  return ['/usr/sbin', '/usr/bin', '/sbin', '/bin'].map((d) => `${d}/${name}`).find((p) => existsSync(p)) ?? name;
}

export async function probeVersion(rootfs: string, compiler: CompilerRecipe): Promise<{ version: string; output: string }> {
  return runProbe(rootfs, compiler.probe, compiler.env);
}

/** A library's version, probed with its compiler's environment (what a program that uses it runs with). */
export async function probeLibraryVersion(rootfs: string, compiler: CompilerRecipe, library: LibraryRecipe): Promise<{ version: string; output: string }> {
  return runProbe(rootfs, library.probe, compiler.env);
}

/**
 * Runs argv inside the image tree (chroot) with the sandbox's base environment. Runtimes
 * read /proc (the JVM's $ORIGIN, CoreCLR's memory map), as they do in the sandbox: it is
 * mounted in a mount namespace of the command's own, so it disappears with it and never
 * stays mounted inside the tree being built.
 */
export function runInImage(rootfs: string, argv: string[], env: Record<string, string> = {}) {
  const args = ['--mount', '--pid', '--fork', `--mount-proc=${rootfs}/proc`, hostTool('chroot'), rootfs, ...argv];
  return execa(hostTool('unshare'), args, {
    env: { ...BASE_ENV, HOME: '/tmp', TMPDIR: '/tmp', ...env },
    extendEnv: false,
    reject: false,
    timeout: 120_000,
    stdin: 'ignore',
    all: true,
  });
}

async function runProbe(rootfs: string, probe: string[], env: Record<string, string> | undefined): Promise<{ version: string; output: string }> {
  const result = await runInImage(rootfs, probe, env);
  const output = `${result.stdout}\n${result.stderr}`.trim();
  if (result.exitCode !== 0) throw new Error(`probe ${probe.join(' ')} failed (exit ${result.exitCode ?? result.signal ?? 'none'}): ${result.shortMessage ?? ''} ${output.slice(0, 500)}`);
  const version = versionFromProbe(output);
  if (!version) throw new Error(`probe ${probe.join(' ')} printed no version: ${output.slice(0, 500)}`);
  return { version, output };
}
