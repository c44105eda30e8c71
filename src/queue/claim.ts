import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { ClaimedJob } from './job.js';

// Claims one queued submission for a runner in a single statement:
//  1. pick the first claimable job in (priority, run_at, created_at) order whose
//     account looks under its runs-at-once limit, locking it (SKIP LOCKED: claimers
//     never wait on each other's picks);
//  2. take a slot on the account: the UPDATE re-checks running_now < limit on the
//     latest row version, so two claimers can never both take the last slot;
//  3. only if a slot was taken, move the job to 'running' under this runner's lease.
// `picked` without `job` means another runner took the account's last slot first.
const claimOne = (db: Db, runnerId: string, leaseSeconds: number) =>
  sql<{ picked: number; job: ClaimedJob | null }>`
    WITH pick AS (
      SELECT s.id, s.account_id, coalesce(a.running, p.running) AS running_limit
      FROM submissions s
      JOIN accounts a ON a.id = s.account_id
      JOIN plans p ON p.name = a.plan
      WHERE s.state = 'queued'
        AND s.run_at <= now()
        AND a.running_now < coalesce(a.running, p.running)
      ORDER BY s.priority, s.run_at, s.created_at
      LIMIT 1
      FOR UPDATE OF s SKIP LOCKED
    ),
    slot AS (
      UPDATE accounts a
      SET running_now = a.running_now + 1
      FROM pick
      WHERE a.id = pick.account_id AND a.running_now < pick.running_limit
      RETURNING a.id
    ),
    claimed AS (
      UPDATE submissions s
      SET state = 'running',
          locked_by = ${runnerId},
          lease_expires_at = now() + make_interval(secs => ${leaseSeconds}),
          attempts = s.attempts + 1,
          started_at = now()
      FROM pick, slot
      WHERE s.id = pick.id AND slot.id = pick.account_id
      RETURNING s.id, s.account_id, s.key_id, s.compiler, s.code, s.input, s.tests, s.extra_params, s.run_options,
                s.mode, s.units, s.month, s.attempts, s.max_attempts
    )
    SELECT (SELECT count(*) FROM pick)::int AS picked,
           (SELECT to_jsonb(claimed) FROM claimed) AS job
  `.execute(db);

/**
 * Claims up to `n` jobs for `runnerId`, never letting an account have more jobs
 * running than its limit (accounts.running, else its plan's). Returns fewer when the
 * queue has nothing else claimable now.
 */
export async function claim(db: Db, runnerId: string, n: number, leaseSeconds: number): Promise<ClaimedJob[]> {
  const jobs: ClaimedJob[] = [];
  // A lost race on an account's last slot is retried with a fresh snapshot; the bound
  // keeps a pathological storm of races from spinning here.
  let racesLeft = 4 * n;
  while (jobs.length < n) {
    const { rows } = await claimOne(db, runnerId, leaseSeconds);
    const row = rows[0];
    if (!row || row.picked === 0) break;
    if (row.job) {
      jobs.push(normalize(row.job));
    } else if (--racesLeft <= 0) {
      break;
    }
  }
  return jobs;
}

// to_jsonb renders bigint ids as numbers; the rest of the code keeps ids as strings.
function normalize(job: ClaimedJob): ClaimedJob {
  return {
    ...job,
    account_id: String(job.account_id),
    key_id: job.key_id === null ? null : String(job.key_id),
  };
}
