import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { Config } from '../config.js';
import { availabilityOf, compilerAvailability, type CompilerAvailability } from './availability.js';
import { catalogue } from './catalogue.js';

// What the deployment can run, as an API host sees it. Runners publish the compilers
// of their installed images with every heart-beat (runners.compilers). A compiler is
// offered when at least one live runner (heart-beat within the lease, not stopped)
// serves it. With no live runner that published its compilers (a single host whose
// runner is starting, an API tested on its own), the API falls back to its own
// images directory, which on a single host is the runner's. On an API-only host with
// every runner down that directory is empty, so runs answer 400 compiler_unavailable
// until a runner heart-beats again.

/** Compiler id → version, from the images installed under `imagesDir` (what a runner publishes). */
export function installedCompilers(imagesDir: string, recipesDir = ''): Record<string, string> {
  return Object.fromEntries(compilerAvailability(imagesDir, recipesDir).flatMap((c) => (c.version !== null ? [[c.id, c.version]] : [])));
}

/** The settings availability reads. */
export type AvailabilityConfig = Pick<Config, 'RUNBOX_IMAGES_DIR' | 'RUNBOX_RECIPES_DIR' | 'RUNBOX_LEASE_SECONDS'>;

/** Every compiler of the catalogue, available when a live runner (or, with none, this host) has it installed. */
export async function deploymentAvailability(db: Db, config: AvailabilityConfig): Promise<CompilerAvailability[]> {
  const { RUNBOX_IMAGES_DIR: imagesDir, RUNBOX_RECIPES_DIR: recipesDir, RUNBOX_LEASE_SECONDS: freshSeconds } = config;
  const { rows } = await sql<{ compilers: Record<string, string> }>`
    SELECT compilers FROM runners
    WHERE stopped_at IS NULL AND compilers IS NOT NULL AND last_seen > now() - make_interval(secs => ${freshSeconds})
    ORDER BY id
  `.execute(db);
  if (rows.length === 0) return compilerAvailability(imagesDir, recipesDir);
  return [...catalogue(recipesDir).entries.values()].map((entry) =>
    availabilityOf(entry, rows.map((r) => r.compilers[entry.id]).find((v) => typeof v === 'string') ?? null),
  );
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
