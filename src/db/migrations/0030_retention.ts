import { type Kysely, sql } from 'kysely';

// Retention (src/retention): submissions older than RUNBOX_RETENTION_DAYS are deleted in
// small batches, each batch one statement that also
// - keeps a tombstone of each (submissions_expired: id, account, when it was made), so a
//   lookup of a purged submission answers 410 submission_expired to its account rather
//   than 404;
// - adds the purged runs to per-day totals (usage_days), so the dashboard's runs per day
//   and each key's last use stay exact without the rows. Monthly usage was never counted
//   from the rows (account_usage, key_usage).
//
// The purge walks submissions by created_at: that index is built CONCURRENTLY after the
// migrations (src/db/online-indexes.ts), so writes never wait for it on a large table.
//
// Only new tables: the previous release's statements are unaffected (expand only).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE submissions_expired (
      id                 uuid PRIMARY KEY,
      account_id         bigint NOT NULL,
      created_at         timestamptz NOT NULL,
      purged_at          timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE usage_days (
      account_id         bigint NOT NULL REFERENCES accounts(id),
      -- 0: runs made without a key (an API marketplace's).
      key_id             bigint NOT NULL DEFAULT 0,
      day                date NOT NULL,
      -- Tests counted as at admission (submissions.units), refunded runs left out.
      runs               integer NOT NULL DEFAULT 0 CHECK (runs >= 0),
      -- The newest created_at among them, refunded or not (a key's last use).
      last_at            timestamptz NOT NULL,
      PRIMARY KEY (account_id, key_id, day)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX IF EXISTS submissions_created;
    DROP TABLE usage_days, submissions_expired;
  `.execute(db);
}
