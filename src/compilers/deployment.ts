import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Config } from '../config.js';
import { availabilityOf, compilerAvailability, type CompilerAvailability } from './availability.js';
import { catalogue } from './catalogue.js';
import { LIBRARIES_KEY, type PublishedCompilers } from '../queue/heartbeat.js';

// What the deployment can run, as an API host sees it. Runners publish the compilers
// of their installed images with every heart-beat (runners.compilers). A compiler is
// offered when at least one live runner (heart-beat within the lease, not stopped)
// serves it. With no live runner that published its compilers (a single host whose
// runner is starting, an API tested on its own), the API falls back to its own
// images directory, which on a single host is the runner's. On an API-only host with
// every runner down that directory is empty, so runs answer 400 compiler_unavailable
// until a runner heart-beats again.

/** What a runner publishes of the images installed under `imagesDir`. */
export interface InstalledCompilers {
  /** Compiler id → toolchain version. */
  compilers: Record<string, string>;
  /** Compiler id → its libraries (name → version), for the ids that have some. */
  libraries: Record<string, Record<string, string>>;
}

export function installedCompilers(imagesDir: string, recipesDir = ''): InstalledCompilers {
  const installed = compilerAvailability(imagesDir, recipesDir).filter((c) => c.version !== null);
  return {
    compilers: Object.fromEntries(installed.map((c) => [c.id, c.version!])),
    libraries: Object.fromEntries(installed.filter((c) => Object.keys(c.libraries).length > 0).map((c) => [c.id, c.libraries])),
  };
}

/** The name → version strings of a published library list; anything else in it is ignored. */
function librariesOf(value: unknown): Record<string, string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** The settings availability reads. */
export type AvailabilityConfig = Pick<Config, 'RUNBOX_IMAGES_DIR' | 'RUNBOX_RECIPES_DIR' | 'RUNBOX_LEASE_SECONDS'>;

/** Every compiler of the catalogue, available when a live runner (or, with none, this host) has it installed. */
export async function deploymentAvailability(db: Db, config: AvailabilityConfig): Promise<CompilerAvailability[]> {
  const { RUNBOX_IMAGES_DIR: imagesDir, RUNBOX_RECIPES_DIR: recipesDir, RUNBOX_LEASE_SECONDS: freshSeconds } = config;
  const { rows } = await sql<{ compilers: PublishedCompilers }>`
    SELECT compilers FROM runners
    WHERE stopped_at IS NULL AND compilers IS NOT NULL AND last_seen > now() - make_interval(secs => ${freshSeconds})
    ORDER BY id
  `.execute(db);
  if (rows.length === 0) return compilerAvailability(imagesDir, recipesDir);
  return [...catalogue(recipesDir).entries.values()].map((entry) => {
    // The version and the libraries come from the same runner: the first live one that has the id.
    const row = rows.find((r) => typeof r.compilers[entry.id] === 'string');
    if (!row) return availabilityOf(entry, null);
    const published = row.compilers[LIBRARIES_KEY];
    const libraries = published && typeof published === 'object' ? librariesOf(published[entry.id]) : {};
    return availabilityOf(entry, row.compilers[entry.id] as string, libraries);
  });
}

/** How long a process trusts its view of what the deployment offers. */
const CACHE_MS = 1000;

/** deploymentAvailability's available ids, re-read at most once per second per process. */
export function availabilityCache(db: Db, config: AvailabilityConfig): () => Promise<Set<string>> {
  let available = new Set<string>();
  let readAt = -Infinity;
  let pending: Promise<Set<string>> | undefined;
  return async () => {
    if (performance.now() - readAt < CACHE_MS) return available;
    pending ??= deploymentAvailability(db, config)
      .then((list) => {
        available = new Set(list.filter((c) => c.available).map((c) => c.id));
        readAt = performance.now();
        return available;
      })
      .finally(() => (pending = undefined));
    return pending;
  };
}
