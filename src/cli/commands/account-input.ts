import { AccountInputError } from '../../accounts/errors.js';
import { type CommandContext, requireString, UsageError } from '../command.js';

// Option checks shared by the account and admin-key commands.

/** The option `--name` as a numeric row id (bigint range), or a usage error. */
export function numericId(ctx: CommandContext, name: string): string {
  const v = requireString(ctx, name);
  if (!/^\d{1,18}$/.test(v)) throw new UsageError(`--${name} must be a numeric id`);
  return v;
}

/** Operator mistakes (unknown id, bad URL) are usage errors: exit 2 with the message. */
export async function asUsage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AccountInputError) throw new UsageError(err.message);
    throw err;
  }
}
