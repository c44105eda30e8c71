import type { Config } from '../config.js';
import { connect, type DbHandle } from './connect.js';

// How many connections each process holds to PostgreSQL, stated in one place (the
// formula for a fleet is in docs/operating.md#scaling-out), and where it LISTENs.
//
//   runner alone       RUNNER_POOL (4) + 1 LISTEN, whatever RUNBOX_RUNNER_SLOTS
//   API and/or sender  RUNBOX_DATABASE_POOL (10) + 1 LISTEN
//   everything (npm start)  both pools + 1 LISTEN
//
// A runner's statements are short and one at a time per slot (a claim, a heart-beat, a
// slot's turnover, a chunk of live output): four connections carry hundreds of them a
// second, and a slot that finds them all busy waits a few milliseconds in the pool
// rather than costing the database a backend.

/** Connections in a runner's pool, whatever its slots. */
export const RUNNER_POOL = 4;

export interface Components {
  api?: boolean;
  sender?: boolean;
  runner?: boolean;
}

/** The pool size of a process running these components. */
export function poolSize(config: Pick<Config, 'RUNBOX_DATABASE_POOL'>, c: Components): number {
  return (c.api || c.sender ? config.RUNBOX_DATABASE_POOL : 0) + (c.runner ? RUNNER_POOL : 0);
}

/**
 * Where the process LISTENs: null when it does not (`none`, or transaction pooling and no
 * direct URL), and everything polls.
 */
export function listenUrl(config: Pick<Config, 'RUNBOX_DATABASE_URL' | 'RUNBOX_DATABASE_LISTEN_URL' | 'RUNBOX_DATABASE_POOLING'>): string | null {
  if (config.RUNBOX_DATABASE_LISTEN_URL === 'none') return null;
  if (config.RUNBOX_DATABASE_LISTEN_URL) return config.RUNBOX_DATABASE_LISTEN_URL;
  return config.RUNBOX_DATABASE_POOLING === 'transaction' ? null : config.RUNBOX_DATABASE_URL;
}

/** Named prepared statements are per server connection: a pooler in transaction mode hands each transaction any of them. */
export function namedStatementsAllowed(config: Pick<Config, 'RUNBOX_DATABASE_POOLING'>): boolean {
  return config.RUNBOX_DATABASE_POOLING === 'session';
}

/** The pool of a process running these components, as the configuration says it is reached. */
export function connectFor(config: Config, c: Components, applicationName: string): DbHandle {
  return connect(config.RUNBOX_DATABASE_URL, { max: poolSize(config, c), applicationName, namedStatements: namedStatementsAllowed(config) });
}
