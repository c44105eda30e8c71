import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../db/connect.js';

// Test data, content-addressed: a file is named by its sha-256 and stored once however
// many tests, versions, problems and accounts hold it. Runner hosts cache it by the same
// name (src/runner/data-cache.ts), so a cached copy is never stale.

export const sha256 = (content: Buffer): Buffer => createHash('sha256').update(content).digest();

/** Stores `content` (of sha-256 `hash`) unless a file of its hash is there already; returns its hash. */
export async function putTestData(trx: Db, content: Buffer, hash = sha256(content)): Promise<Buffer> {
  // Looked up first: sending megabytes to have ON CONFLICT drop them would cost the transfer.
  const known = await trx.selectFrom('test_data').select('size').where('hash', '=', hash).executeTakeFirst();
  if (!known) {
    await sql`INSERT INTO test_data (hash, size, content) VALUES (${hash}, ${content.length}, ${content}) ON CONFLICT (hash) DO NOTHING`.execute(trx);
  }
  return hash;
}

/** A file by its hash, as stored; undefined when no test holds it any more. Its reader,
 *  the runner host's cache (src/runner/data-cache.ts), checks it against the hash. */
export async function readTestData(db: Db, hash: Buffer): Promise<Buffer | undefined> {
  const row = await db.selectFrom('test_data').select('content').where('hash', '=', hash).executeTakeFirst();
  return row?.content;
}
