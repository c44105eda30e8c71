import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { parseProcCgroup, parseMountInfo } from '../../src/sandbox/cgroups/detect.js';
import { createSandbox, findNsjail, releasePreparedStages, runnerCgroups, type LauncherName } from '../../src/sandbox/index.js';
import type { Sandbox } from '../../src/sandbox/spec.js';

// Shared by the sandbox integration suites: real images, real launchers, real cgroups,
// and the checks that a run left the host as it found it.

export const LAUNCHERS: LauncherName[] = ['bwrap', 'nsjail'];

/** Slots far above what a runner uses, so other suites' sandboxes never share a uid;
 *  RUNBOX_TEST_SLOT_BASE moves them, so two checkouts' suites can run side by side. */
export const TEST_SLOT_BASE = Number(process.env.RUNBOX_TEST_SLOT_BASE ?? 900);

/** The installed image's root, or null (with the reason) when it is not built yet. */
export function imageRootfs(image: string): { rootfs: string } | { skip: string } {
  const dir = join(loadConfig().RUNBOX_IMAGES_DIR, image);
  if (existsSync(join(dir, 'manifest.json')) && existsSync(join(dir, 'rootfs'))) return { rootfs: join(dir, 'rootfs') };
  return { skip: `image ${image} is not installed in ${dir} (runbox-admin image build)` };
}

/**
 * Why bubblewrap cannot run here, or null: it needs unprivileged user namespaces, which
 * some hosts turn off (kernel.unprivileged_userns_clone, user.max_user_namespaces, an
 * AppArmor restriction). Probed by running it as an unprivileged uid, as the runner does.
 */
function bwrapUnusable(): string | null {
  const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
  if (!bwrap) return 'bwrap not found on PATH';
  const uid = loadConfig().RUNBOX_SANDBOX_UID_BASE + TEST_SLOT_BASE + 99;
  const r = spawnSync(bwrap, ['--unshare-user', '--ro-bind', '/', '/', '/bin/true'], { uid, gid: uid, encoding: 'utf8', timeout: 10_000 });
  return r.status === 0 ? null : `bwrap cannot make a user namespace as an unprivileged user here: ${(r.stderr || r.error?.message || `exit ${r.status}`).trim()}`;
}

/** The sandbox for `launcher`, or the reason it cannot be had on this host. */
export async function sandboxOrSkip(launcher: LauncherName): Promise<Sandbox | string> {
  const config = loadConfig();
  if (process.getuid?.() !== 0) return 'sandbox tests need root';
  if (launcher === 'nsjail' && !(await findNsjail(config))) return 'nsjail not found (RUNBOX_NSJAIL or PATH)';
  if (launcher === 'bwrap') {
    const why = bwrapUnusable();
    if (why) return why;
  }
  return createSandbox(config, { launcher });
}

/**
 * Whether this host's job cgroups report peak memory: cgroup v1 always does; v2 only
 * from Linux 5.19 (memory.peak). Probed in a job cgroup made for the purpose.
 */
export async function hostReportsMemoryPeak(): Promise<boolean> {
  const cgroups = await runnerCgroups();
  if (cgroups.version === 1) return true;
  const job = await cgroups.createJob({ memoryBytes: 64 << 20, cpuCores: 1, maxTasks: 8 });
  try {
    return existsSync(join(job.procsFiles[0]!, '..', 'memory.peak'));
  } finally {
    await job.remove();
  }
}

/**
 * The sandbox for `launcher` and the root of the installed `image`, or a skipped suite
 * (with its reason printed) when either cannot be had on this host.
 */
export async function imageSandboxOrSkip(ctx: Mocha.Context, launcher: LauncherName, image: string): Promise<{ sb: Sandbox; rootfs: string }> {
  const found = imageRootfs(image);
  const s = await sandboxOrSkip(launcher);
  const reason = 'skip' in found ? found.skip : typeof s === 'string' ? s : null;
  if (reason) {
    console.log(`      SKIPPED: ${reason}`);
    ctx.skip();
  }
  return { sb: s as Sandbox, rootfs: (found as { rootfs: string }).rootfs };
}

const binDir = join(tmpdir(), 'runbox-test-bin');

/** The path of a static x86-64 binary built from C on the host (cached by source). */
function staticBinaryPath(source: string, extra: string[] = []): string {
  const key = createHash('sha256').update(source).update(extra.join(' ')).digest('hex').slice(0, 16);
  const out = join(binDir, key);
  if (!existsSync(out)) {
    mkdirSync(binDir, { recursive: true });
    writeFileSync(`${out}.c`, source);
    execFileSync('gcc', ['-static', '-O1', '-o', out, `${out}.c`, ...extra], { stdio: 'pipe' });
  }
  return out;
}

/** A static x86-64 binary built from C on the host: it runs in any image. */
export function staticBinary(source: string, extra: string[] = []): Buffer {
  return readFileSync(staticBinaryPath(source, extra));
}

/**
 * How `source` ends when run bare on this host, outside any sandbox: a probe for kernel
 * features a test must not assume (some kernels refuse 32-bit syscalls themselves).
 */
export function bareRun(source: string, extra: string[] = []): { signal: NodeJS.Signals | null; status: number | null; stdout: string } {
  const r = spawnSync(staticBinaryPath(source, extra), [], { encoding: 'utf8', timeout: 10_000 });
  return { signal: r.signal, status: r.status, stdout: r.stdout };
}

export function uidOfSlot(slot: number): number {
  return loadConfig().RUNBOX_SANDBOX_UID_BASE + slot;
}

/** Host processes whose real uid is one of `uids`. */
export function processesOf(uids: number[]): number[] {
  const found: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const m = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${e}/status`, 'utf8'));
      if (m && uids.includes(Number(m[1]))) found.push(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Job cgroups this test process created that still exist, in every hierarchy. */
export function leftoverJobCgroups(): string[] {
  const own = parseProcCgroup(readFileSync('/proc/self/cgroup', 'utf8'));
  const left: string[] = [];
  for (const m of parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8'))) {
    const paths = m.fsType === 'cgroup2' ? [own.get('')] : m.controllers.map((c) => own.get(c));
    for (const p of new Set(paths)) {
      if (p === undefined) continue;
      for (const base of [join(m.mountPoint, p), join(m.mountPoint, p, '..')]) {
        try {
          for (const e of readdirSync(base)) if (e.startsWith(`job-${process.pid}-`)) left.push(join(base, e));
        } catch {
          // not a directory here
        }
      }
    }
  }
  return [...new Set(left)];
}

export function fileDigest(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (e) {
    return `unreadable: ${(e as NodeJS.ErrnoException).code}`;
  }
}

/** Asserts no process of the given slots survives and no job cgroup is left, once the
 *  sandbox has released what it keeps ready for the next run. */
export async function expectHostClean(slots: number[]): Promise<void> {
  await releasePreparedStages();
  expect(processesOf(slots.map(uidOfSlot)), 'processes of the sandbox uid').to.deep.equal([]);
  expect(leftoverJobCgroups(), 'leftover job cgroups').to.deep.equal([]);
}
