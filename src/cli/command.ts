import type { ParseArgsConfig } from 'node:util';
import type { Config } from '../config.js';
import type { Db } from '../db/connect.js';
import { moreText, type Page, type PageRequest } from '../util/pages.js';

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

/** --limit N, --after KEY, --all: every list command's paging options. */
export const pageOptions = { limit: { type: 'string' }, after: { type: 'string' }, all: { type: 'boolean' } } as const;

/** The help lines of the paging options. */
export function pageHelp(noun: string, defaultLimit: number, afterWhat = 'id'): string {
  return [
    `  --limit N    at most N ${noun}, newest first (default ${defaultLimit})`,
    `  --after ${afterWhat.toUpperCase().padEnd(4)} the ${noun} older than this one (the ${afterWhat} the previous page ended with)`,
    `  --all        every one of them`,
  ].join('\n');
}

/** The page asked for; `afterPattern` is what a key of this list looks like. */
export function pageRequest(ctx: CommandContext, defaultLimit: number, afterPattern: RegExp = /^\d{1,18}$/): PageRequest {
  const all = ctx.values.all === true;
  if (all && ctx.values.limit !== undefined) throw new UsageError('--all and --limit do not go together');
  const limit = all ? null : (optionalInt(ctx, 'limit') ?? defaultLimit);
  if (limit === 0) throw new UsageError('--limit must be at least 1');
  const after = ctx.values.after;
  if (after !== undefined && (typeof after !== 'string' || !afterPattern.test(after))) throw new UsageError(`--after must be the ${afterPattern.source.includes('a-f') ? 'id (a UUID)' : 'id'} of a listed item`);
  return { limit, after: after as string | undefined };
}

/**
 * A page of a list as a command's result: the items print as any result does (a table,
 * or a JSON array), and how many more there are, with the option that shows them, on
 * stderr, so a script reading the array is not disturbed.
 */
export class Listed<T> {
  constructor(
    readonly page: Page<T>,
    readonly noun: string,
  ) {}

  /** The remark under the list; undefined when nothing more is left. */
  remark(): string | undefined {
    if (this.page.more === 0 || this.page.next === null) return undefined;
    return `${this.page.items.length} shown, newest first; ${moreText(this.page, this.noun)}: --after ${this.page.next} for the next page, --all for every one`;
  }
}
