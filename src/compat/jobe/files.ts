import { sql } from 'kysely';
import type { Db } from '../../db/connect.js';
import { JOBE_FILE_CACHE } from '../../limits.js';
import type { DecodedFile } from '../../program/program.js';

// Jobe's file cache (PUT and HEAD files/{id}), one per account in PostgreSQL so that any
// API host answers for it. A cache, as Jobe's is: past its bounds the files used least
// recently go, and a client that finds one gone (404 on a run) PUTs it again, as
// CodeRunner does.

/** Stores (or replaces) a file, then trims the account's cache to its bounds. */
export async function putJobeFile(db: Db, accountId: string, fileId: string, content: Buffer): Promise<void> {
  await db
    .insertInto('jobe_files')
    .values({ account_id: accountId, file_id: fileId, content, size: content.length })
    .onConflict((oc) => oc.columns(['account_id', 'file_id']).doUpdateSet({ content, size: content.length, used_at: sql`now()` }))
    .execute();
  const c = JOBE_FILE_CACHE;
  await sql`
    DELETE FROM jobe_files f
     USING (SELECT file_id,
                   row_number() OVER w AS n,
                   sum(size) OVER w AS bytes,
                   used_at
              FROM jobe_files WHERE account_id = ${accountId}
            WINDOW w AS (ORDER BY used_at DESC, file_id)) r
     WHERE f.account_id = ${accountId} AND f.file_id = r.file_id
       AND (r.n > ${c.filesPerAccount} OR r.bytes > ${c.bytesPerAccount} OR r.used_at < now() - make_interval(hours => ${c.keepHours}))`.execute(db);
}

export async function hasJobeFile(db: Db, accountId: string, fileId: string): Promise<boolean> {
  const row = await db
    .selectFrom('jobe_files')
    .select('file_id')
    .where('account_id', '=', accountId)
    .where('file_id', '=', fileId)
    .where(sql<boolean>`used_at >= now() - make_interval(hours => ${JOBE_FILE_CACHE.keepHours})`)
    .executeTakeFirst();
  return row !== undefined;
}

/** The files a run names, under the names it gives them; null when one is not in the cache. */
export async function readJobeFiles(db: Db, accountId: string, refs: { id: string; name: string }[]): Promise<DecodedFile[] | null> {
  if (refs.length === 0) return [];
  const ids = [...new Set(refs.map((r) => r.id))];
  const rows = await db
    .updateTable('jobe_files')
    .set({ used_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('file_id', 'in', ids)
    .where(sql<boolean>`used_at >= now() - make_interval(hours => ${JOBE_FILE_CACHE.keepHours})`)
    .returning(['file_id', 'content'])
    .execute();
  const byId = new Map(rows.map((r) => [r.file_id, r.content]));
  if (ids.some((id) => !byId.has(id))) return null;
  return refs.map((r) => ({ name: r.name, content: byId.get(r.id)!, text: false }));
}
