import { type Kysely, sql } from 'kysely';

// The web portal: accounts may carry a password (argon2id) and a verified address;
// browser sessions (only a hash of the session id is stored), one-time links for
// invites, password resets and address verification (only a hash of the token), and
// log-in attempts for the per-address and per-IP limits.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- NULL: no password yet (an account the CLI made sets one through a link).
    ALTER TABLE accounts ADD COLUMN password_hash text;
    -- Accounts made by the operator count as verified; the portal's sign-up leaves it
    -- NULL until the emailed link is opened when SMTP is configured.
    ALTER TABLE accounts ADD COLUMN email_verified_at timestamptz DEFAULT now();

    CREATE TABLE portal_sessions (
      id_hash            bytea PRIMARY KEY,
      account_id         bigint NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
      csrf_token         text NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now(),
      last_seen_at       timestamptz NOT NULL DEFAULT now(),
      expires_at         timestamptz NOT NULL
    );
    CREATE INDEX portal_sessions_account ON portal_sessions(account_id);

    CREATE TABLE account_tokens (
      token_hash         bytea PRIMARY KEY,
      purpose            text NOT NULL CHECK (purpose IN ('invite', 'reset', 'verify')),
      email              text NOT NULL,
      account_id         bigint REFERENCES accounts(id) ON DELETE CASCADE,
      created_at         timestamptz NOT NULL DEFAULT now(),
      expires_at         timestamptz NOT NULL,
      used_at            timestamptz
    );

    CREATE TABLE login_attempts (
      id                 bigserial PRIMARY KEY,
      email              text NOT NULL,
      ip                 text NOT NULL,
      succeeded          boolean NOT NULL,
      at                 timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX login_attempts_email ON login_attempts(email, at);
    CREATE INDEX login_attempts_ip ON login_attempts(ip, at);
    CREATE INDEX submissions_key_created ON submissions(key_id, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX submissions_key_created;
    DROP TABLE login_attempts, account_tokens, portal_sessions;
    ALTER TABLE accounts DROP COLUMN email_verified_at;
    ALTER TABLE accounts DROP COLUMN password_hash;
  `.execute(db);
}
