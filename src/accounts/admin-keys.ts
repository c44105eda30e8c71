import { randomBytes } from 'node:crypto';
import type { Db } from '../db/connect.js';
import { pageOf, type Page, type PageRequest } from '../util/pages.js';
import { AccountInputError } from './errors.js';
import { displayPrefix, hashKey } from './keys.js';

// Admin keys: for /api/admin/* and /metrics on the API. Shown once at creation, stored
// only as a SHA-256 hash, in their own table: an account's API key is never an admin
// key, and an admin key never runs code.

const ADMIN_KEY_PREFIX = 'rbxa_';

export interface CreatedAdminKey {
  id: string;
  key: string;
  key_prefix: string;
  label: string;
  created_at: string;
}

export interface AdminKeyListing {
  id: string;
  key_prefix: string;
  label: string;
  created_at: string;
  revoked_at: string | null;
}

export async function createAdminKey(db: Db, label: string): Promise<CreatedAdminKey> {
  const name = label.trim();
  if (name === '' || name.length > 200) throw new AccountInputError('label must have 1 to 200 characters');
  const key = ADMIN_KEY_PREFIX + randomBytes(32).toString('base64url');
  const row = await db
    .insertInto('admin_keys')
    .values({ key_hash: hashKey(key), key_prefix: displayPrefix(key), label: name })
    .returning(['id', 'key_prefix', 'label', 'created_at'])
    .executeTakeFirstOrThrow();
  return { ...row, key, created_at: row.created_at.toISOString() };
}

/** The admin key with this hash, unless revoked. */
export async function findAdminKey(db: Db, keyHash: Buffer): Promise<{ id: string; label: string } | undefined> {
  return db.selectFrom('admin_keys').select(['id', 'label']).where('key_hash', '=', keyHash).where('revoked_at', 'is', null).executeTakeFirst();
}

/** A page of admin keys, newest first, and how many more. */
export async function listAdminKeys(db: Db, page: PageRequest = { limit: null }): Promise<Page<AdminKeyListing>> {
  let q = db.selectFrom('admin_keys').select(['id', 'key_prefix', 'label', 'created_at', 'revoked_at']).orderBy('id', 'desc');
  if (page.after !== undefined) q = q.where('id', '<', page.after);
  if (page.limit !== null) q = q.limit(page.limit);
  const items = (await q.execute()).map((r) => ({ ...r, created_at: r.created_at.toISOString(), revoked_at: r.revoked_at?.toISOString() ?? null }));
  return pageOf(items, page, (k) => k.id, async (last) =>
    Number((await db.selectFrom('admin_keys').select((eb) => eb.fn.countAll<string>().as('n')).where('id', '<', last).executeTakeFirstOrThrow()).n),
  );
}

export async function revokeAdminKey(db: Db, id: string): Promise<AdminKeyListing> {
  const row = await db.updateTable('admin_keys').set({ revoked_at: new Date() }).where('id', '=', id).where('revoked_at', 'is', null).returning('id').executeTakeFirst();
  if (!row) {
    const exists = await db.selectFrom('admin_keys').select('id').where('id', '=', id).executeTakeFirst();
    if (!exists) throw new AccountInputError(`no admin key ${id}`);
  }
  return (await listAdminKeys(db)).items.find((k) => k.id === id)!;
}
