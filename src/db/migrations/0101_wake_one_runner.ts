import { type Kysely, sql } from 'kysely';

// An admission wakes one runner host, not all of them. Every admission notified
// runbox_jobs, which every listening runner host hears: each host with a free slot then
// claimed, and all but one found nothing (at 1,000 slots most of PostgreSQL's CPU per run).
//
// runner_wakes holds each listening runner's wake tokens: how many of its slots are free
// with the runner waiting to fill them, and the channel it LISTENs on besides
// runbox_jobs. The runner's own claim statements set the count (src/queue/wake.ts), so it
// costs no statement of its own. runbox_wake_one(), called once per admitted run, takes
// one token of the runner woken longest ago (SKIP LOCKED: never waiting on a claim in
// flight) and notifies that runner's channel; with no token to take (every runner busy,
// or the one with free slots is claiming at this instant) it notifies runbox_jobs as
// before, which runners with a free slot hear. So a claim never misses a job: a runner
// whose claim ran on a snapshot without the job holds its row while it writes its tokens,
// and an admission that skips a locked row wakes everyone. A woken runner that died
// leaves its job to the others' polls (RUNBOX_POLL_MS); its tokens are taken one per
// admission and not given again. A release still running notifies runbox_jobs and
// ignores the table.

const BEFORE = `PERFORM pg_notify('runbox_jobs', '');`;
const AFTER = `PERFORM runbox_wake_one();`;

async function swap(db: Kysely<unknown>, from: string, to: string): Promise<void> {
  await sql`
    DO $$
    DECLARE
      def text := pg_get_functiondef('runbox_admit(jsonb, integer[], text[])'::regprocedure);
    BEGIN
      IF position(${sql.lit(from)} IN def) = 0 THEN
        RAISE EXCEPTION 'runbox_admit does not call %', ${sql.lit(from)};
      END IF;
      EXECUTE replace(def, ${sql.lit(from)}, ${sql.lit(to)});
    END $$
  `.execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE runner_wakes (
      runner_id text PRIMARY KEY,
      channel   text NOT NULL,
      slots     integer NOT NULL DEFAULT 0 CHECK (slots >= 0),
      woken_at  timestamptz
    );
    CREATE FUNCTION runbox_wake_one() RETURNS void LANGUAGE plpgsql VOLATILE AS $fn$
    DECLARE
      v_channel text;
    BEGIN
      UPDATE runner_wakes w SET slots = w.slots - 1, woken_at = clock_timestamp()
       WHERE w.runner_id = (SELECT o.runner_id FROM runner_wakes o WHERE o.slots > 0
                             ORDER BY o.woken_at NULLS FIRST LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING w.channel INTO v_channel;
      -- Delivered when the admission commits; identical ones of a transaction are folded.
      PERFORM pg_notify(coalesce(v_channel, 'runbox_jobs'), '');
    END
    $fn$;
  `.execute(db);
  await swap(db, BEFORE, AFTER);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await swap(db, AFTER, BEFORE);
  await sql`DROP FUNCTION runbox_wake_one(); DROP TABLE runner_wakes;`.execute(db);
}
