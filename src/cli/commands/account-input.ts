import { accountIdByEmail } from '../../accounts/accounts.js';
import { AccountInputError } from '../../accounts/errors.js';
import { type CommandContext, requireString, UsageError } from '../command.js';

// Option checks shared by the account and admin-key commands.

/** The option `--name` as a numeric row id (bigint range), or a usage error. */
export function numericId(ctx: CommandContext, name: string): string {
  const v = requireString(ctx, name);
  if (!/^\d{1,18}$/.test(v)) throw new UsageError(`--${name} must be a numeric id`);
  return v;
}

/** The account named by `--account ID` or `--email E` (whatever its case); a usage error when neither names one. */
export async function accountIdOf(ctx: CommandContext): Promise<string> {
  if (ctx.values.account !== undefined) return numericId(ctx, 'account');
  if (ctx.values.email === undefined) throw new UsageError('give --account ID or --email E');
  const id = await accountIdByEmail(ctx.db, requireString(ctx, 'email'));
  if (id === undefined) throw new UsageError(`no account with email ${String(ctx.values.email)}`);
  return id;
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
