import { type Kysely, sql } from 'kysely';

// Sessions that keep their state between runs (POST /api/v2/sessions): the session, its
// workspace's files (the state a run finds in /box and leaves behind) and the plan's
// limits of sessions: how many one account holds open at once, and how long one may live.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE plans
      ADD COLUMN sessions_at_once integer NOT NULL DEFAULT 2 CHECK (sessions_at_once >= 0),
      ADD COLUMN session_lifetime_seconds integer NOT NULL DEFAULT 3600 CHECK (session_lifetime_seconds >= 1);

    CREATE TABLE run_sessions (
      id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id         bigint NOT NULL REFERENCES accounts(id),
      key_id             bigint REFERENCES api_keys(id),
      compiler           text NOT NULL,
      kind               text NOT NULL DEFAULT 'files' CHECK (kind IN ('files', 'kernel')),
      run_limits         jsonb,
      idle_timeout_seconds integer NOT NULL CHECK (idle_timeout_seconds >= 1),
      max_lifetime_seconds integer NOT NULL CHECK (max_lifetime_seconds >= 1),
      created_at         timestamptz NOT NULL DEFAULT now(),
      last_active_at     timestamptz NOT NULL DEFAULT now(),
      -- A run of the session is under way until then (one at a time); NULL: none.
      busy_until         timestamptz,
      runs               integer NOT NULL DEFAULT 0,
      -- Sandbox time the session's runs held, billed as the session's sandbox seconds.
      sandbox_ms         bigint NOT NULL DEFAULT 0,
      ended_at           timestamptz,
      ending             text CHECK (ending IN ('closed', 'idle_timeout', 'max_lifetime'))
    );
    CREATE INDEX run_sessions_open ON run_sessions(account_id) WHERE ended_at IS NULL;

    CREATE TABLE run_session_files (
      session_id         uuid NOT NULL REFERENCES run_sessions(id) ON DELETE CASCADE,
      path               text NOT NULL,
      mode               integer NOT NULL,
      content            bytea NOT NULL,
      PRIMARY KEY (session_id, path)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE run_session_files, run_sessions;
    ALTER TABLE plans DROP COLUMN sessions_at_once, DROP COLUMN session_lifetime_seconds;
  `.execute(db);
}
