import { type Kysely, sql } from 'kysely';

// Operations: admin keys (the /api/admin endpoints and /metrics), the compilers each
// runner can run (so API hosts without images know what the deployment offers), and
// the usage email outbox.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- {"<compiler id>": "<toolchain version>"} of the images installed on that runner.
    ALTER TABLE runners ADD COLUMN compilers jsonb;

    CREATE TABLE admin_keys (
      id                 bigserial PRIMARY KEY,
      key_hash           bytea NOT NULL UNIQUE,
      key_prefix         text NOT NULL,
      label              text NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now(),
      revoked_at         timestamptz
    );

    -- One row per (account, key, month, threshold): written by admission in the same
    -- transaction that moves usage across 80% or 100%, ON CONFLICT DO NOTHING, so each
    -- email exists once however many API processes admit. key_id NULL: the account's
    -- own allowance.
    CREATE TABLE usage_emails (
      id                 bigserial PRIMARY KEY,
      account_id         bigint NOT NULL REFERENCES accounts(id),
      key_id             bigint REFERENCES api_keys(id),
      month              text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
      threshold          integer NOT NULL CHECK (threshold IN (80, 100)),
      used               integer NOT NULL,
      monthly_limit      integer NOT NULL,
      to_address         text NOT NULL,
      attempts           integer NOT NULL DEFAULT 0,
      run_at             timestamptz NOT NULL DEFAULT now(),
      locked_by          text,
      lease_expires_at   timestamptz,
      last_error         text,
      created_at         timestamptz NOT NULL DEFAULT now(),
      sent_at            timestamptz
    );
    CREATE UNIQUE INDEX usage_emails_once ON usage_emails (account_id, coalesce(key_id, 0), month, threshold);
    CREATE INDEX usage_emails_unsent ON usage_emails (run_at) WHERE sent_at IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE usage_emails, admin_keys;
    ALTER TABLE runners DROP COLUMN compilers;
  `.execute(db);
}
