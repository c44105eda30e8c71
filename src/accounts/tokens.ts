import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { TokenPurpose } from '../db/schema.js';

// One-time links: an invite to sign up, a password reset, an address verification.
// The token is shown once (in the link); only its SHA-256 is stored. Using a token
// marks it used in the same statement that checks it, so a link works once.

export const TOKEN_LIFETIME_MS: Record<TokenPurpose, number> = {
  invite: 7 * 24 * 3600_000,
  reset: 24 * 3600_000,
  verify: 7 * 24 * 3600_000,
};

const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest();

export async function issueToken(
  db: Db,
  purpose: TokenPurpose,
  email: string,
  accountId: string | null,
  now: Date = new Date(),
): Promise<{ token: string; expires_at: string }> {
  const token = randomBytes(32).toString('base64url');
  const expires = new Date(now.getTime() + TOKEN_LIFETIME_MS[purpose]);
  await db
    .insertInto('account_tokens')
    .values({ token_hash: hashToken(token), purpose, email: email.trim(), account_id: accountId, expires_at: expires })
    .execute();
  return { token, expires_at: expires.toISOString() };
}

export interface TokenRow {
  email: string;
  account_id: string | null;
}

/** The unused, unexpired token of this purpose, without using it. */
export async function peekToken(db: Db, purpose: TokenPurpose, token: string): Promise<TokenRow | undefined> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
  return db
    .selectFrom('account_tokens')
    .select(['email', 'account_id'])
    .where('token_hash', '=', hashToken(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

/** Uses the token once: the row when it was valid, undefined when unknown, used or expired. */
export async function consumeToken(db: Db, purpose: TokenPurpose, token: string): Promise<TokenRow | undefined> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) return undefined;
  return db
    .updateTable('account_tokens')
    .set({ used_at: sql<Date>`now()` })
    .where('token_hash', '=', hashToken(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning(['email', 'account_id'])
    .executeTakeFirst();
}
