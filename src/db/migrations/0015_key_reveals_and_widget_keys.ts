import { type Kysely, sql } from 'kysely';

// key_reveals: a new key (and its signing secret), held for the one page that shows it
// after key creation answered with a redirect (post/redirect/get). The row belongs to
// the portal session that made the key, is deleted when that page is shown, and lives
// a few minutes at most; a reload finds nothing, so the key is never shown twice.
//
// Widget keys run only over the WebSocket from their allowed origins: they never send
// callbacks, so they carry no signing secret and no Redirect Url. Existing widget keys
// lose theirs; a widget key without an allowed origin can run nowhere, and is refused
// from now on (src/accounts/keys.ts), but rows made before are left as they are.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE key_reveals (
      session_id_hash    bytea NOT NULL REFERENCES portal_sessions(id_hash) ON DELETE CASCADE,
      key_id             bigint NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
      key                text,
      signing_secret     text,
      expires_at         timestamptz NOT NULL,
      PRIMARY KEY (session_id_hash, key_id)
    );

    ALTER TABLE api_keys ALTER COLUMN signing_secret DROP NOT NULL;
    UPDATE api_keys SET signing_secret = NULL, redirect_url = NULL WHERE kind = 'widget';
    ALTER TABLE api_keys ADD CONSTRAINT api_keys_widget_no_secret CHECK ((kind = 'widget') = (signing_secret IS NULL));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE api_keys DROP CONSTRAINT api_keys_widget_no_secret;
    UPDATE api_keys SET signing_secret = 'rbxs_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') WHERE signing_secret IS NULL;
    ALTER TABLE api_keys ALTER COLUMN signing_secret SET NOT NULL;
    DROP TABLE key_reveals;
  `.execute(db);
}
