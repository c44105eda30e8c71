import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { CONFIG_VARS, type Config } from '../config.js';
import { describeLock, lockFile, type HeldLock } from '../util/flock.js';

// Each runner process on a host claims the sandbox uids its slots run as (base …
// base + slots − 1), so two runners never run programs as the same user: one lock
// file per claimed range in RUNBOX_LOCK_DIR (uids-<first>-<last>.lock), flock'd for
// the runner's life. The kernel drops the lock when the runner dies however it dies,
// so the file of a dead runner is free for the next to take. Claims are made one at a
// time under the directory's own lock (.claim), which makes "find a free range, lock
// it" atomic across processes.

/** Where the search for a free range starts when the base is not set. */
const DEFAULT_FIRST_UID = CONFIG_VARS.RUNBOX_SANDBOX_UID_BASE.default as number;
const MAX_UID = 4_000_000_000;
const RANGE_FILE = /^uids-(\d+)-(\d+)\.lock$/;

export class UidRangeTaken extends Error {}

export interface UidRange {
  first: number;
  last: number;
  /** The lock file that holds it. */
  file: string;
  /** Gives the range up (at a graceful stop). */
  release(): Promise<void>;
}

interface Held {
  first: number;
  last: number;
  holder: string;
}

export interface ClaimOptions {
  lockDir: string;
  slots: number;
  /** RUNBOX_SANDBOX_UID_BASE when the operator set it: exactly this range, or a refusal. */
  explicitBase?: number;
  /** Written into the lock file for whoever finds it. */
  runnerId: string;
}

const overlaps = (a: { first: number; last: number }, b: { first: number; last: number }) => a.first <= b.last && b.first <= a.last;

/** The ranges other live runners hold; the files of dead ones are removed on the way. */
async function liveRanges(lockDir: string): Promise<Held[]> {
  const held: Held[] = [];
  for (const name of readdirSync(lockDir).sort()) {
    const m = RANGE_FILE.exec(name);
    if (!m) continue;
    const path = join(lockDir, name);
    const stale = await lockFile(path);
    if (stale) {
      await stale.release({ remove: true });
      continue;
    }
    let holder = 'another runner';
    try {
      const who = JSON.parse(readFileSync(path, 'utf8')) as { runner?: string; pid?: number };
      holder = `runner ${who.runner ?? '?'} (pid ${who.pid ?? '?'})`;
    } catch {
      // being written, or written by hand
    }
    held.push({ first: Number(m[1]), last: Number(m[2]), holder });
  }
  return held;
}

function chooseFirst(o: ClaimOptions, held: Held[]): number {
  if (o.explicitBase !== undefined) {
    const want = { first: o.explicitBase, last: o.explicitBase + o.slots - 1 };
    const clash = held.find((h) => overlaps(h, want));
    if (clash) {
      throw new UidRangeTaken(
        `sandbox uids ${want.first}-${want.last} (RUNBOX_SANDBOX_UID_BASE=${o.explicitBase}, ${o.slots} slots) overlap ` +
          `${clash.first}-${clash.last}, held by ${clash.holder} (${join(o.lockDir, `uids-${clash.first}-${clash.last}.lock`)}); ` +
          'give this runner another RUNBOX_SANDBOX_UID_BASE, or leave it unset to take the next free range',
      );
    }
    return want.first;
  }
  // The lowest free range from the default up: either the default itself or just after a held one.
  const candidates = [DEFAULT_FIRST_UID, ...held.map((h) => h.last + 1)].filter((c) => c >= DEFAULT_FIRST_UID).sort((a, b) => a - b);
  for (const first of candidates) {
    const want = { first, last: first + o.slots - 1 };
    if (want.last <= MAX_UID && !held.some((h) => overlaps(h, want))) return first;
  }
  throw new UidRangeTaken(`no free range of ${o.slots} sandbox uids from ${DEFAULT_FIRST_UID} up`);
}

/** Claims this runner's sandbox uid range; throws UidRangeTaken when it cannot. */
export async function claimUidRange(o: ClaimOptions): Promise<UidRange> {
  mkdirSync(o.lockDir, { recursive: true, mode: 0o755 });
  const claim = (await lockFile(join(o.lockDir, '.claim'), { wait: true }))!;
  let range: HeldLock | null;
  let first: number;
  try {
    first = chooseFirst(o, await liveRanges(o.lockDir));
    range = await lockFile(join(o.lockDir, `uids-${first}-${first + o.slots - 1}.lock`));
    // Every claimer holds .claim, and a dead holder's lock is free: only someone not
    // following this protocol can hold it.
    if (!range) throw new UidRangeTaken(`uids-${first}-${first + o.slots - 1}.lock in ${o.lockDir} is held outside the claim protocol`);
    await describeLock(range, `${JSON.stringify({ runner: o.runnerId, pid: process.pid, host: hostname(), since: new Date().toISOString() })}\n`);
  } finally {
    await claim.release();
  }
  const held = range;
  return { first, last: first + o.slots - 1, file: held.path, release: () => held.release({ remove: true }) };
}

/** The claim a runner process makes at start-up, from its configuration and environment. */
export function claimForRunner(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<UidRange> {
  return claimUidRange({
    lockDir: config.RUNBOX_LOCK_DIR,
    slots: config.RUNBOX_RUNNER_SLOTS,
    // Whether the operator set the base, not just the default the configuration fills in.
    explicitBase: env.RUNBOX_SANDBOX_UID_BASE !== undefined ? config.RUNBOX_SANDBOX_UID_BASE : undefined,
    runnerId: config.RUNBOX_RUNNER_ID || `${hostname()}-${process.pid}`,
  });
}
