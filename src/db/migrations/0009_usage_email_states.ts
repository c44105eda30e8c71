import { type Kysely, sql } from 'kysely';

// Usage emails end like callback deliveries: sent, or dead after their last attempt
// (RUNBOX_MAIL_MAX_ATTEMPTS), instead of being retried for ever. An operator can list
// them and send one again (`runbox-admin email list|resend`).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE usage_emails ADD COLUMN state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'dead'));
    UPDATE usage_emails SET state = 'sent' WHERE sent_at IS NOT NULL;
    ALTER TABLE usage_emails ADD CONSTRAINT usage_emails_sent_state CHECK ((state = 'sent') = (sent_at IS NOT NULL));
    DROP INDEX usage_emails_unsent;
    CREATE INDEX usage_emails_pending ON usage_emails (run_at) WHERE state = 'pending';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX usage_emails_pending;
    CREATE INDEX usage_emails_unsent ON usage_emails (run_at) WHERE sent_at IS NULL;
    ALTER TABLE usage_emails DROP CONSTRAINT usage_emails_sent_state;
    ALTER TABLE usage_emails DROP COLUMN state;
  `.execute(db);
}
