import { type RawBuilder, sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { executePrepared } from '../db/prepared.js';
import type { ClaimedJob } from './job.js';
import { retryOnConflict } from './retry.js';
import { type WakeTokens, wakeCte } from './wake.js';

// Claims queued submissions for a runner, a batch in a single statement:
//  1. candidates: the first claimable jobs in (priority, run_at, created_at) order
//     whose account looks under its runs-at-once limit;
//  2. pick: of those, at most as many per account as it has free slots, then the
//     first `n` that are still queued, locked (SKIP LOCKED: claimers never wait on
//     each other's picks); one job alone is picked straight from that order;
//  3. take the slots on each account (accounts locked in id order): the UPDATE
//     re-checks the limit on the latest row version, so two claimers can never both
//     take an account's last slot;
//  4. only the picks whose account's slots were taken move to 'running' under this
//     runner's lease.
// With an account share, a claim that picked jobs also takes the runner's turn (turnCte)
// before the account slots, so that the share is counted on a snapshot no other claim of
// that runner has overtaken. The share is work-conserving: jobs of accounts under their
// share on this runner go first; an account at its share takes a further slot only when
// no such job is there to claim. Such a job is claimed `borrowed`: an interactive one
// idle on its user's input gives the slot back when another account's run waits
// (src/runner/lent-slots.ts), so idle browsers starve nobody.
// The candidate and pick steps are shared with completeAndClaim (./complete-and-claim.ts).

/** Candidates looked at per job wanted: room for accounts already at their limit. */
const CANDIDATES_PER_JOB = 4;

/** How many candidates a claim of `n` jobs looks at first. */
export function candidatesFor(n: number): number {
  return n * CANDIDATES_PER_JOB;
}

/** How many of a runner's slots one account may hold (runners.account_slots): all of
 *  them, or its slots less the ones it keeps for other accounts. */
export interface AccountShare {
  runnerId: string;
  accountSlots: number;
}

/** A runner's share for one account: `slots` less `reserved`, at least one. */
export function accountSlots(slots: number, reserved: number): number {
  return Math.max(1, slots - reserved);
}

/**
 * The `turn` and `pick` CTEs over `picked` (the jobs picked and locked): when any was
 * picked, moves the runner's claim_turns on by one, only from the value this statement's
 * snapshot saw, and `pick` is `picked` only if it did. The share is counted on that
 * snapshot, which cannot show a claim of the same runner still in flight; a row lock
 * alone would not help, since the snapshot was taken before the statement waited. Of two
 * claims of one runner at the same instant, the second to take the row finds the value
 * moved (Postgres re-reads the row it waited for) and claims nothing, and its caller
 * claims again on a fresh snapshot. A claim that picks nothing writes nothing (every
 * admission wakes every listening runner). A runner with no row (never heart-beaten)
 * gets no turn.
 */
function turnCtes(runnerId: string): RawBuilder<unknown> {
  return sql`
    turn AS (
      UPDATE runners rn SET claim_turns = rn.claim_turns + 1
      WHERE rn.id = ${runnerId} AND rn.claim_turns = (SELECT seen.claim_turns FROM runners seen WHERE seen.id = ${runnerId})
        AND EXISTS (SELECT 1 FROM picked)
      RETURNING rn.id
    ),
    pick AS (SELECT * FROM picked WHERE EXISTS (SELECT 1 FROM turn))`;
}

/** 1 when the statement picked jobs but another claim of the runner took its turn first (never without a share): a column for the callers' answers. */
export function lostTurnColumn(share?: AccountShare): RawBuilder<unknown> {
  return share ? sql`(EXISTS (SELECT 1 FROM picked) AND NOT EXISTS (SELECT 1 FROM turn))::int` : sql`0`;
}

/**
 * The `cand` and `pick` CTEs: up to `n` jobs to claim, from the first `candidates`
 * claimable ones (when n > 1). `freed`, when given, names an earlier CTE of
 * (account_id) rows whose slots this same statement gives back (each row one slot),
 * which the snapshot's running_now does not show yet. With `share`, jobs of accounts whose
 * jobs running on that runner (less what `freed` gives back there) are below their share
 * go first, others only for slots none of those takes (work-conserving), and `pick`
 * holds the picks only if the runner's turn was taken (turnCtes).
 */
export function pickCtes(n: number, freed: string | null, candidates = candidatesFor(n), share?: AccountShare): RawBuilder<unknown> {
  const freedCount = freed
    ? sql`(SELECT count(*) FROM ${sql.table(freed)} f WHERE f.account_id = a.id)::int`
    : sql`0`;
  // With a share the picks are `picked`, and `pick` what the runner's turn lets through.
  const picks = share ? sql`picked` : sql`pick`;
  const turn = share ? sql`,${turnCtes(share.runnerId)}` : sql``;
  const onRunner = share
    ? sql`((SELECT count(*) FROM submissions o WHERE o.locked_by = ${share.runnerId} AND o.state = 'running' AND o.account_id = a.id)::int - ${freedCount})`
    : sql`0`;
  const shareLeft = share ? sql`${share.accountSlots} - ${onRunner}` : null;
  const claimable = (filter: RawBuilder<unknown> | null) => sql`
      FROM submissions s
      JOIN accounts a ON a.id = s.account_id
      JOIN plans p ON p.name = a.plan
      WHERE s.state = 'queued'
        AND s.run_at <= now()
        AND a.running_now - ${freedCount} < coalesce(a.running, p.running)
        ${filter ? sql`AND ${filter}` : sql``}
      ORDER BY s.priority, s.run_at, s.created_at`;
  const columns = sql`s.id, s.account_id, s.priority, s.run_at, s.created_at`;
  if (n === 1) {
    // One job: the first claimable one, locked as the scan reaches it; SKIP LOCKED walks
    // on past jobs other claimers are taking, so the pick never comes back empty while
    // a claimable job is free. (`cand` is the pick itself, for the callers' counts.)
    if (!shareLeft) {
      return sql`
    ${picks} AS (SELECT ${columns}, false AS borrowed ${claimable(null)} LIMIT 1 FOR UPDATE OF s SKIP LOCKED),
    cand AS (SELECT id FROM ${picks})`;
    }
    // With a share: a job of an account under it first; only when there is none, one of
    // an account at its share (the second scan runs only then: its condition is the first's emptiness).
    return sql`
    under_share AS (SELECT ${columns}, false AS borrowed ${claimable(sql`${shareLeft} > 0`)} LIMIT 1 FOR UPDATE OF s SKIP LOCKED),
    over_share AS (
      SELECT ${columns}, true AS borrowed ${claimable(sql`NOT EXISTS (SELECT 1 FROM under_share)`)}
      LIMIT 1
      FOR UPDATE OF s SKIP LOCKED
    ),
    ${picks} AS (SELECT * FROM under_share UNION ALL SELECT * FROM over_share)${turn},
    cand AS (SELECT id FROM ${picks})`;
  }
  // Several jobs: the account's free slots bound how many of its jobs one statement
  // takes, which needs the candidates before locking. Only the picks are locked: a
  // claimer that locked every candidate it looked at would hide them (SKIP LOCKED) from
  // concurrent claimers, which would then find nothing. With a share, the candidates
  // within their account's share go first, those beyond it fill what is left.
  const free = sql`coalesce(a.running, p.running) - a.running_now + ${freedCount}`;
  return sql`
    cand AS (
      SELECT ${columns}, ${free} AS free,
             ${shareLeft ? sql`least(${free}, ${shareLeft})` : free} AS free_share ${claimable(null)}
      LIMIT ${candidates}
    ),
    eligible AS (
      SELECT r.id, r.account_id, r.priority, r.run_at, r.created_at, r.nth > r.free_share AS borrowed FROM (
        SELECT c.*, row_number() OVER (PARTITION BY c.account_id ORDER BY c.priority, c.run_at, c.created_at) AS nth FROM cand c
      ) r
      WHERE r.nth <= r.free
    ),
    ${picks} AS (
      -- Still queued on the latest row version, and not being claimed by another.
      SELECT e.id, e.account_id, e.priority, e.run_at, e.created_at, e.borrowed
      FROM submissions s JOIN eligible e ON e.id = s.id
      WHERE s.state = 'queued'
      ORDER BY e.borrowed, e.priority, e.run_at, e.created_at
      LIMIT ${n}
      FOR UPDATE OF s SKIP LOCKED
    )${turn}`;
}

/**
 * The `locked` and `slot` CTEs: moves running_now of each account in `delta`
 * (account_id, d) by d; a rise only where it keeps the account within its limit,
 * re-checked on the latest row version. The account rows are locked first in id
 * order, so two statements moving several accounts never deadlock on them.
 */
export function slotCtes(): RawBuilder<unknown> {
  return sql`
    locked AS (
      SELECT a.id FROM accounts a WHERE a.id IN (SELECT account_id FROM delta) ORDER BY a.id FOR UPDATE
    ),
    slot AS (
      UPDATE accounts a
      SET running_now = a.running_now + delta.d
      FROM delta JOIN locked ON locked.id = delta.account_id, plans p
      WHERE a.id = delta.account_id AND p.name = a.plan
        AND (delta.d <= 0 OR a.running_now + delta.d <= coalesce(a.running, p.running))
      RETURNING a.id
    )`;
}

/** The `claimed` CTE: the picks whose account slots `slot` (account ids) took, moved to 'running'. */
export function claimedCte(runnerId: string, leaseSeconds: number): RawBuilder<unknown> {
  return sql`
    claimed AS (
      UPDATE submissions s
      SET state = 'running',
          locked_by = ${runnerId},
          lease_expires_at = now() + make_interval(secs => ${leaseSeconds}),
          attempts = s.attempts + 1,
          started_at = now()
      FROM pick
      WHERE s.id = pick.id AND pick.account_id IN (SELECT id FROM slot)
      RETURNING s.id, s.account_id, s.key_id, s.compiler, s.code, s.input, s.tests, s.extra_params, s.run_options,
                s.mode, s.units, s.month, s.attempts, s.max_attempts,
                extract(epoch FROM now() - s.run_at)::float8 AS queued_seconds, pick.borrowed
    )`;
}

const claimBatch = (db: Db, runnerId: string, n: number, leaseSeconds: number, candidates: number, share?: AccountShare, wake?: WakeTokens) =>
  executePrepared(db, 'runbox_claim', sql<{ lost_turn: number; candidates: number; picked: number; jobs: ClaimedJob[] }>`
    WITH ${pickCtes(n, null, candidates, share)},
    delta AS (SELECT account_id, count(*)::int AS d FROM pick GROUP BY account_id),
    ${slotCtes()},
    ${claimedCte(runnerId, leaseSeconds)}${wake ? sql`,${wakeCte(wake, n)}` : sql``}
    SELECT ${lostTurnColumn(share)} AS lost_turn, (SELECT count(*) FROM cand)::int AS candidates, (SELECT count(*) FROM pick)::int AS picked,
           coalesce((SELECT jsonb_agg(to_jsonb(c) ORDER BY p.priority, p.run_at, p.created_at)
                       FROM claimed c JOIN pick p ON p.id = c.id), '[]'::jsonb) AS jobs
  `);

/**
 * Claims up to `n` jobs for `runnerId`, never letting an account have more jobs
 * running than its limit (accounts.running, else its plan's). Returns fewer when the
 * queue has nothing else claimable now.
 */
export async function claim(db: Db, runnerId: string, n: number, leaseSeconds: number, share?: AccountShare, wake?: WakeTokens): Promise<ClaimedJob[]> {
  const jobs: ClaimedJob[] = [];
  // A lost race on an account's last slot is retried with a fresh snapshot; the bound
  // keeps a pathological storm of races from spinning here.
  let racesLeft = 4;
  // Each look after one whose candidates were all being taken by concurrent claimers
  // goes twice as far down the queue.
  let widen = 1;
  while (jobs.length < n) {
    const wanted = n - jobs.length;
    const candidates = candidatesFor(wanted) * widen;
    // Two claimers taking slots on the same accounts in opposite orders deadlock; the loser changed nothing.
    // Each statement leaves the runner's wake tokens at the slots still free after it.
    const { rows } = await retryOnConflict(() => claimBatch(db, runnerId, wanted, leaseSeconds, candidates, share, wake));
    const row = rows[0];
    if (!row) break;
    jobs.push(...row.jobs.map(normalizeJob));
    const allTaken = row.picked === 0 && row.candidates >= candidates;
    if (row.lost_turn === 1 || row.jobs.length < row.picked || allTaken) {
      // Lost the runner's turn to another of its slots, or a race for an account's last
      // slot, or every candidate was being taken by concurrent claimers (more may be
      // queued behind them): look again with a fresh snapshot.
      if (--racesLeft <= 0) break;
      if (allTaken) widen *= 2;
    } else if (row.candidates < candidates) {
      // The candidates were all there is to claim now.
      break;
    }
    // Otherwise the candidates may have hidden claimable jobs behind accounts at their limit.
  }
  return jobs;
}

// to_jsonb renders bigint ids as numbers; the rest of the code keeps ids as strings.
export function normalizeJob(job: ClaimedJob): ClaimedJob {
  return {
    ...job,
    account_id: String(job.account_id),
    key_id: job.key_id === null ? null : String(job.key_id),
  };
}
