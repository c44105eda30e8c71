import { hash, verify, Algorithm } from '@node-rs/argon2';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { AccountInputError } from './errors.js';

// Account passwords: argon2id with the OWASP minimum (19 MiB, 2 passes, 1 lane; the
// package's defaults), through @node-rs/argon2's prebuilt binding. Only the encoded
// hash is stored; a password is never logged or returned.

const ARGON2 = { algorithm: Algorithm.Argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_CHARS = 10;
export const PASSWORD_MAX_CHARS = 200;

export function checkPasswordRules(password: string): void {
  if ([...password].length < PASSWORD_MIN_CHARS) throw new AccountInputError(`password must have at least ${PASSWORD_MIN_CHARS} characters`);
  if ([...password].length > PASSWORD_MAX_CHARS) throw new AccountInputError(`password must have at most ${PASSWORD_MAX_CHARS} characters`);
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, ARGON2);
}

// Verified against when no account matches, so "no such account" costs what a wrong password costs.
let dummyHash: Promise<string> | undefined;

/** True when the password matches the stored hash; a null hash (no password set) never matches. */
export async function passwordMatches(stored: string | null, password: string): Promise<boolean> {
  if (stored === null) {
    await verify(await (dummyHash ??= hashPassword('runbox-no-such-account')), password).catch(() => false);
    return false;
  }
  return verify(stored, password).catch(() => false);
}

/**
 * Sets the account's password and ends every reset link it still has: a link asked for
 * before the change must not undo it. (The portal ends the account's other sessions.)
 */
export async function setPassword(db: Db, accountId: string, password: string): Promise<void> {
  checkPasswordRules(password);
  await setPasswordHash(db, accountId, await hashPassword(password));
}

/** setPassword with the hash already made (hashPassword) from a password that passed the rules. */
export async function setPasswordHash(db: Db, accountId: string, passwordHash: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', accountId).returning('id').executeTakeFirst();
    if (!row) throw new AccountInputError(`no account ${accountId}`);
    await trx
      .updateTable('account_tokens')
      .set({ used_at: sql<Date>`now()` })
      .where('account_id', '=', accountId)
      .where('purpose', '=', 'reset')
      .where('used_at', 'is', null)
      .execute();
  });
}

/** The account with this address (case-insensitive) and its credentials, for log-in. */
export async function findLogin(
  db: Db,
  email: string,
): Promise<{ id: string; email: string; password_hash: string | null; email_verified_at: Date | null } | undefined> {
  return db
    .selectFrom('accounts')
    .select(['id', 'email', 'password_hash', 'email_verified_at'])
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    // Marketplace subscribers' accounts have no address, so no log-in.
    .where('email', 'is not', null)
    .$narrowType<{ email: string }>()
    .orderBy('id')
    .executeTakeFirst();
}
