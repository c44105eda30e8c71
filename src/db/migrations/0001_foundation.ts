import { type Kysely, sql } from 'kysely';

// Plans, accounts, keys, monthly usage counters, the job queue, runner heart-beats
// and service settings.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE plans (
      name               text PRIMARY KEY,
      monthly_limit      integer NOT NULL CHECK (monthly_limit >= 0),
      per_minute         integer NOT NULL CHECK (per_minute >= 0),
      pending            integer NOT NULL CHECK (pending >= 0),
      running            integer NOT NULL CHECK (running >= 0),
      tests_per_request  integer NOT NULL CHECK (tests_per_request >= 1),
      created_at         timestamptz NOT NULL DEFAULT now(),
      updated_at         timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE accounts (
      id                 bigserial PRIMARY KEY,
      email              text NOT NULL UNIQUE,
      plan               text NOT NULL REFERENCES plans(name),
      -- Per-account overrides of the plan's figures; NULL: the plan's.
      monthly_limit      integer CHECK (monthly_limit >= 0),
      per_minute         integer CHECK (per_minute >= 0),
      pending            integer CHECK (pending >= 0),
      running            integer CHECK (running >= 0),
      tests_per_request  integer CHECK (tests_per_request >= 1),
      -- Jobs of this account in a sandbox now; moved only by the queue's transitions,
      -- in the same statement that moves a job into or out of 'running'.
      running_now        integer NOT NULL DEFAULT 0 CHECK (running_now >= 0),
      created_at         timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE api_keys (
      id                 bigserial PRIMARY KEY,
      account_id         bigint NOT NULL REFERENCES accounts(id),
      key_hash           bytea NOT NULL UNIQUE,
      key_prefix         text NOT NULL,
      app_name           text NOT NULL,
      redirect_url       text,
      kind               text NOT NULL CHECK (kind IN ('api', 'widget')),
      monthly_limit      integer CHECK (monthly_limit >= 0),
      signing_secret     text NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now(),
      revoked_at         timestamptz
    );
    CREATE INDEX api_keys_account ON api_keys(account_id);

    CREATE TABLE account_usage (
      account_id         bigint NOT NULL REFERENCES accounts(id),
      month              text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
      submissions        integer NOT NULL DEFAULT 0 CHECK (submissions >= 0),
      PRIMARY KEY (account_id, month)
    );

    CREATE TABLE key_usage (
      key_id             bigint NOT NULL REFERENCES api_keys(id),
      month              text NOT NULL CHECK (month ~ '^[0-9]{4}-[0-9]{2}$'),
      submissions        integer NOT NULL DEFAULT 0 CHECK (submissions >= 0),
      PRIMARY KEY (key_id, month)
    );

    CREATE TABLE submissions (
      id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id         bigint NOT NULL REFERENCES accounts(id),
      key_id             bigint REFERENCES api_keys(id),
      compiler           text NOT NULL,
      code               text NOT NULL,
      input              text,
      tests              jsonb,
      extra_params       jsonb,
      mode               text NOT NULL DEFAULT 'async' CHECK (mode IN ('async', 'sync', 'ws')),
      priority           smallint NOT NULL DEFAULT 0,
      state              text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'finished', 'failed')),
      -- Submissions billed against the monthly allowance (one per test).
      units              integer NOT NULL DEFAULT 1 CHECK (units >= 1),
      month              text NOT NULL,
      refunded           boolean NOT NULL DEFAULT false,
      attempts           integer NOT NULL DEFAULT 0,
      max_attempts       integer NOT NULL DEFAULT 3,
      run_at             timestamptz NOT NULL DEFAULT now(),
      locked_by          text,
      lease_expires_at   timestamptz,
      created_at         timestamptz NOT NULL DEFAULT now(),
      started_at         timestamptz,
      finished_at        timestamptz,
      result             jsonb,
      last_error         text
    );
    CREATE INDEX submissions_queued ON submissions(priority, run_at, created_at) WHERE state = 'queued';
    CREATE INDEX submissions_pending ON submissions(account_id) WHERE state IN ('queued', 'running');
    CREATE INDEX submissions_running_lease ON submissions(lease_expires_at) WHERE state = 'running';
    CREATE INDEX submissions_account_created ON submissions(account_id, created_at);

    CREATE TABLE runners (
      id                 text PRIMARY KEY,
      hostname           text NOT NULL,
      slots              integer NOT NULL,
      launcher           text NOT NULL,
      started_at         timestamptz NOT NULL DEFAULT now(),
      last_seen          timestamptz NOT NULL DEFAULT now(),
      stopped_at         timestamptz
    );

    CREATE TABLE settings (
      name               text PRIMARY KEY,
      value              jsonb NOT NULL,
      updated_at         timestamptz NOT NULL DEFAULT now()
    );

  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE settings, runners, submissions, key_usage, account_usage, api_keys, accounts, plans`.execute(db);
}
