import { createHash } from 'node:crypto';
import type { RawBuilder } from 'kysely';
import { type Db, poolOf, poolQuery } from './connect.js';

// The queue's hot statements (claim, complete-and-claim) are large CTEs: Postgres spent
// more time parsing and planning them (about 2 ms) than running them (about 0.6 ms).
// Sent as named prepared statements they are parsed once per connection, and Postgres
// may settle on a generic plan. Kysely cannot name a statement, so the compiled text
// goes to the pool directly; inside a transaction (no pool known), and behind a pooler
// in transaction mode (src/db/connections.ts), it runs unnamed.

const names = new Map<string, string>();
const MAX_NAMES = 256;

function nameFor(label: string, text: string): string {
  let name = names.get(text);
  if (!name) {
    // Named by content: a statement whose text differs (another CTE variant) is another statement.
    name = `${label}_${createHash('sha1').update(text).digest('hex').slice(0, 12)}`;
    if (names.size >= MAX_NAMES) names.clear();
    names.set(text, name);
  }
  return name;
}

export async function executePrepared<R>(db: Db, label: string, query: RawBuilder<R>): Promise<{ rows: R[] }> {
  const known = poolOf(db);
  // Behind a pooler in transaction mode the statement is parsed and planned each time.
  if (!known?.named) return query.execute(db);
  const { sql: text, parameters } = query.compile(db);
  const res = await poolQuery(known.pool, { name: nameFor(label, text), text, values: parameters as unknown[] });
  return { rows: res.rows as R[] };
}
