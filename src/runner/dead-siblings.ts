import type { Db } from '../db/connect.js';
import { expireLeasesOf } from '../queue/expire-leases.js';
import { reapExpired, type Reaped } from '../queue/reap.js';
import { isAlive } from '../sandbox/cgroups/kill.js';

// At start-up: earlier runners on this host whose process is gone (killed, crashed)
// still hold their jobs, and those jobs hold their accounts' run slots until the lease
// runs out. Their pid is in the runners table; a pid with no process means the runner
// is dead, so its jobs are requeued now.

export async function requeueDeadSiblings(db: Db, hostname: string): Promise<{ runners: string[]; reaped: Reaped } | null> {
  const rows = await db
    .selectFrom('runners')
    .select(['id', 'pid'])
    .where('hostname', '=', hostname)
    .where('stopped_at', 'is', null)
    .where('pid', 'is not', null)
    .execute();
  const dead = rows.filter((r) => r.pid !== process.pid && !isAlive(r.pid!)).map((r) => r.id);
  if (dead.length === 0) return null;
  await expireLeasesOf(db, dead);
  return { runners: dead, reaped: await reapExpired(db) };
}
