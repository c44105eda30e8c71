import { type Kysely, sql } from 'kysely';

// Addresses are unique whatever their case: the case-sensitive UNIQUE of 0001 becomes
// a unique index on lower(email), which every look-up by address uses. Accounts whose
// addresses already differ only in case are never merged or changed here: the
// migration stops (its transaction rolls back, the schema stays as it was) with the
// list of them, and runs once the operator has given all but one of each group another
// address (`runbox-admin account set-email`), which works on the older schema.
//
// Also: sign-up attempts per client address, for the sign-up limit
// (src/portal/signup-limit.ts); who asked for a callback redelivery, for the
// per-account limit on the portal's (src/callbacks/redeliver.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ key: string; accounts: { id: string; email: string; created_at: string }[] }>`
    SELECT lower(email) AS key,
           json_agg(json_build_object('id', id::text, 'email', email, 'created_at', created_at) ORDER BY id) AS accounts
    FROM accounts WHERE email IS NOT NULL
    GROUP BY lower(email) HAVING count(*) > 1
    ORDER BY lower(email)
  `.execute(db);
  if (rows.length > 0) {
    const list = rows.map((r) => `  ${r.accounts.map((a) => `account ${a.id} <${a.email}> (created ${a.created_at})`).join(', ')}`).join('\n');
    throw new Error(
      `${rows.length} email address${rows.length === 1 ? ' is' : 'es are'} held by more than one account, differing only in case:\n${list}\n` +
        'Nothing was changed. Log-in reaches only the first account of each group. Give every other account of a group an address of its own ' +
        '(runbox-admin account set-email --account ID --email ADDRESS), then migrate again.',
    );
  }
  await sql`
    ALTER TABLE accounts DROP CONSTRAINT accounts_email_key;
    CREATE UNIQUE INDEX accounts_email_lower_key ON accounts (lower(email));

    CREATE TABLE signup_attempts (
      id                 bigserial PRIMARY KEY,
      ip                 text NOT NULL,
      at                 timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX signup_attempts_ip ON signup_attempts(ip, at);

    -- NULL: the delivery the run's end wrote; portal or operator: a redelivery, and who asked.
    ALTER TABLE callback_deliveries ADD COLUMN redelivered_by text CHECK (redelivered_by IN ('portal', 'operator'));
    CREATE INDEX callback_deliveries_portal_redeliveries ON callback_deliveries(key_id, created_at) WHERE redelivered_by = 'portal';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX callback_deliveries_portal_redeliveries;
    ALTER TABLE callback_deliveries DROP COLUMN redelivered_by;
    DROP TABLE signup_attempts;
    DROP INDEX accounts_email_lower_key;
    ALTER TABLE accounts ADD CONSTRAINT accounts_email_key UNIQUE (email);
  `.execute(db);
}
