import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';

// One admin command: a name of one or two words ("account create"), its options
// (node:util parseArgs), a --help text, and a run function whose return value is
// printed as JSON on stdout.

export interface CommandContext {
  values: Record<string, string | boolean | string[] | boolean[] | undefined>;
  positionals: string[];
  config: Config;
  /** Present when the command declares needsDb. */
  db: Db;
}

export interface Command {
  name: string;
  summary: string;
  /** Lines shown under "options" in --help. */
  help?: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  allowPositionals?: boolean;
  needsDb?: boolean;
  run(ctx: CommandContext): Promise<unknown>;
}

/** A usage error: printed to stderr with the command's --help hint, exit 2. */
export class UsageError extends Error {}

export function requireString(ctx: CommandContext, name: string): string {
  const v = ctx.values[name];
  if (typeof v !== 'string' || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

export function optionalInt(ctx: CommandContext, name: string): number | undefined {
  const v = ctx.values[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !/^\d+$/.test(v)) throw new UsageError(`--${name} must be a whole number`);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n > 2_147_483_647) throw new UsageError(`--${name} is too large`);
  return n;
}
