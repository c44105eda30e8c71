import { type Kysely, sql } from 'kysely';

// The per-runner account share (migration 0021) becomes work-conserving at admission as
// it is in the claim (src/queue/claim.ts): a waiting run (sync, ws) of an account that
// holds its share is refused (too_many_running) only while another account's run is
// queued. Otherwise it is admitted while slots are free: the admitting
// account's runs count in full against the live runners' slots, the other accounts' up
// to their share (what they hold beyond it, they give back to whoever waits when those
// runs end). Only that block of runbox_admit changes, patched in place as 0021 did.

const SHARE_BEFORE = `            IF v_running_now + v_queued_interactive >= v_share AND v_share < capacity THEN`;
const SHARE_AFTER = `            IF v_running_now + v_queued_interactive >= v_share AND v_share < capacity
               AND EXISTS (SELECT 1 FROM submissions s WHERE s.state = 'queued' AND s.account_id <> r.account AND s.run_at <= now()) THEN`;

const BUSY_BEFORE = `              SELECT coalesce(sum(least(t.n, v_share)), 0)::int INTO v_busy
                FROM (SELECT count(*) AS n FROM submissions s`;
const BUSY_AFTER = `              SELECT coalesce(sum(CASE WHEN t.account_id = r.account THEN t.n ELSE least(t.n, v_share) END), 0)::int INTO v_busy
                FROM (SELECT s.account_id, count(*) AS n FROM submissions s`;

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
  await swap(db, [[SHARE_BEFORE, SHARE_AFTER], [BUSY_BEFORE, BUSY_AFTER]]);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await swap(db, [[SHARE_AFTER, SHARE_BEFORE], [BUSY_AFTER, BUSY_BEFORE]]);
}
