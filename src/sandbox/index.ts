import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import type { Config } from '../config.js';
import { NATIVE_BUILD_DIR } from '../util/paths.js';
import { detectCgroups } from './cgroups/detect.js';
import type { CgroupBackend } from './cgroups/types.js';
import { bwrapPlan } from './launchers/bwrap.js';
import { nsjailPlan } from './launchers/nsjail.js';
import { launchKey, runStage, type Prepared, type RunContext } from './run.js';
import { WarmPool } from './warm.js';
import { openLaunchDir } from './launch-dir.js';
import type { Sandbox } from './spec.js';

export type LauncherName = 'bwrap' | 'nsjail';
export type * from './spec.js';

const NATIVE_FILES = ['runbox-forkserver', 'init', 'seccomp.bpf', 'seccomp.kafel'];

const isExecutable = (p: string) => access(p, constants.X_OK).then(() => true, () => false);

/** The first executable `name` on PATH, or null. */
export async function findOnPath(name: string, path = process.env.PATH ?? ''): Promise<string | null> {
  for (const dir of path.split(delimiter)) {
    if (dir && dir.startsWith('/') && (await isExecutable(join(dir, name)))) return join(dir, name);
  }
  return null;
}

/** nsjail from RUNBOX_NSJAIL, else from PATH; null when neither has it. */
export async function findNsjail(config: Pick<Config, 'RUNBOX_NSJAIL'>): Promise<string | null> {
  if (config.RUNBOX_NSJAIL) return (await isExecutable(config.RUNBOX_NSJAIL)) ? config.RUNBOX_NSJAIL : null;
  return findOnPath('nsjail');
}

// Cgroup set-up happens once per process: on v2 it moves the process itself. Job
// cgroups of a runner that crashed are swept then.
let cgroups: Promise<CgroupBackend> | null = null;
export function runnerCgroups(): Promise<CgroupBackend> {
  cgroups ??= detectCgroups()
    .then(async (backend) => {
      await backend.sweepStale();
      return backend;
    })
    .catch((e) => {
      cgroups = null;
      throw e;
    });
  return cgroups;
}

const pools = new Set<WarmPool>();

/** Releases what every sandbox of this process keeps ready between runs. */
export async function releasePreparedStages(): Promise<void> {
  await Promise.all([...pools].map((p) => p.close()));
}

/** The sandbox of this runner host. Needs root, `make -C native`, and bwrap or nsjail. */
export async function createSandbox(config: Config, opts: { launcher?: LauncherName } = {}): Promise<Sandbox> {
  if (process.getuid?.() !== 0) throw new Error('the sandbox needs root (it creates cgroups and drops to per-slot uids)');
  for (const f of NATIVE_FILES) {
    if (!(await access(join(NATIVE_BUILD_DIR, f)).then(() => true, () => false))) {
      throw new Error(`${join(NATIVE_BUILD_DIR, f)} is missing: run 'make -C native'`);
    }
  }
  let launcher: LauncherName;
  let launcherPath: string | null;
  const wanted = opts.launcher ?? config.RUNBOX_LAUNCHER;
  if (wanted === 'auto') {
    launcherPath = await findNsjail(config);
    launcher = launcherPath ? 'nsjail' : 'bwrap';
  } else {
    launcher = wanted as LauncherName;
    launcherPath = launcher === 'nsjail' ? await findNsjail(config) : null;
  }
  if (launcher === 'bwrap') launcherPath = await findOnPath('bwrap');
  if (!launcherPath) throw new Error(launcher === 'nsjail' ? 'nsjail not found (RUNBOX_NSJAIL or PATH)' : 'bwrap not found on PATH');

  // Made once per process; removes the launch directories of runners that are gone.
  await openLaunchDir();
  const ctx: RunContext = {
    cgroups: await runnerCgroups(),
    forkServerPath: join(NATIVE_BUILD_DIR, 'runbox-forkserver'),
    helpersDir: NATIVE_BUILD_DIR,
    launcherPath,
    plan: launcher === 'nsjail' ? nsjailPlan : bwrapPlan,
    uidBase: config.RUNBOX_SANDBOX_UID_BASE,
    pooled: config.RUNBOX_SANDBOX_POOL,
  };
  const pool = new WarmPool(ctx);
  pools.add(pool);
  return {
    launcher,
    pooled: ctx.pooled,
    async run(spec) {
      const prepared = await pool.take(spec.slot, spec.lane ?? 0);
      const key = launchKey(spec);
      // The slot's next sandbox is built once this stage's processes are gone: built
      // while the stage runs, its set-up competes with the stage for the cores and
      // slowed it by more than it saved (sandbox benchmark, two cores).
      // A pooled sandbox still clean after its stage goes back to the slot as it is.
      let kept = false;
      const refill = () => {
        if (!kept) pool.refillSoon(key);
      };
      const keep = (p: Prepared, ready?: Promise<boolean>) => {
        kept = true;
        pool.put(p, ready);
      };
      try {
        return await runStage(ctx, spec, prepared, key, refill, keep);
      } finally {
        refill();
      }
    },
    close: () => pool.close(),
  };
}
