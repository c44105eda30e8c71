import { type Kysely, sql } from 'kysely';

// One account may hold only so many of a runner's slots (runners.account_slots: its
// slots less RUNBOX_RUNNER_RESERVED_SLOTS, at least one), so that runs waiting on their
// users' input (interactive runs hold a slot for up to the timeout with no CPU) cannot
// take every slot of a runner from the other accounts. Runners claim within it
// (src/queue/claim.ts); admission's capacity check for runs that do not wait (sync, ws)
// counts each account's runs up to its share of the live runners, and refuses a run
// whose account already holds its share (too_many_running, `capacity` saying the share).
// Only that block of runbox_admit changes, patched in place as migration 0020 does, so a
// release still running calls it as before; the new column is null for runners of that
// release (no share: all their slots).

const DECLARE_BEFORE = 'v_busy integer;';
const DECLARE_AFTER = 'v_busy integer;\n      v_share integer;';

const CAPACITY_BEFORE = `            UPDATE sync_capacity SET checks = checks + 1;
            SELECT coalesce((SELECT sum(rn.slots) FROM runners rn
                              WHERE rn.stopped_at IS NULL AND rn.last_seen > now() - make_interval(secs => r.fresh_seconds)), 0)::int,
                   (SELECT count(*) FROM submissions s
                     WHERE s.state = 'running' OR (s.state = 'queued' AND s.mode = ANY(p_waiting_modes)))::int
              INTO capacity, v_busy;
            IF v_busy >= capacity THEN
              reason := 'capacity';
            END IF;`;

const CAPACITY_AFTER = `            UPDATE sync_capacity SET checks = checks + 1;
            -- The live runners' slots, and how many of them one account may hold.
            SELECT coalesce(sum(rn.slots), 0)::int, coalesce(sum(least(rn.slots, coalesce(rn.account_slots, rn.slots))), 0)::int
              INTO capacity, v_share
              FROM runners rn
             WHERE rn.stopped_at IS NULL AND rn.last_seen > now() - make_interval(secs => r.fresh_seconds);
            IF v_running_now + v_queued_interactive >= v_share AND v_share < capacity THEN
              -- Its share taken: the slots left are kept for other accounts.
              reason := 'too_many_running';
              capacity := v_share;
            ELSE
              -- Each account's running and waiting runs, up to its share: what is over it waits
              -- for that account's own slots, and takes none of the others'.
              SELECT coalesce(sum(least(t.n, v_share)), 0)::int INTO v_busy
                FROM (SELECT count(*) AS n FROM submissions s
                       WHERE s.state = 'running' OR (s.state = 'queued' AND s.mode = ANY(p_waiting_modes))
                       GROUP BY s.account_id) t;
              IF v_busy >= capacity THEN
                reason := 'capacity';
              END IF;
            END IF;`;

async function swap(db: Kysely<unknown>, pairs: [string, string][]): Promise<void> {
  const checks = pairs.map(([from]) => sql`IF position(${sql.lit(from)} IN def) = 0 THEN RAISE EXCEPTION 'runbox_admit lacks the text to replace'; END IF;`);
  let body = sql`def`;
  for (const [from, to] of pairs) body = sql`replace(${body}, ${sql.lit(from)}, ${sql.lit(to)})`;
  await sql`
    DO $$
    DECLARE
      def text := pg_get_functiondef('runbox_admit(jsonb, integer[], text[])'::regprocedure);
    BEGIN
      ${sql.join(checks, sql` `)}
      EXECUTE ${body};
    END $$
  `.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE runners ADD COLUMN account_slots integer CHECK (account_slots >= 1)`.execute(db);
  await swap(db, [[DECLARE_BEFORE, DECLARE_AFTER], [CAPACITY_BEFORE, CAPACITY_AFTER]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await swap(db, [[DECLARE_AFTER, DECLARE_BEFORE], [CAPACITY_AFTER, CAPACITY_BEFORE]]);
  await sql`ALTER TABLE runners DROP COLUMN account_slots`.execute(db);
}
