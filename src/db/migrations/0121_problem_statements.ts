import { type Kysely, sql } from 'kysely';

// A problem version's statement (Markdown written in the portal's form or found in a
// package, or a package's LaTeX source, offered as a download), and the sha-256 of the
// package a version was uploaded from, so uploading the same package again is told it
// is already stored.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE problem_versions
      ADD COLUMN statement text,
      ADD COLUMN statement_format text CHECK (statement_format IN ('markdown', 'latex')),
      ADD COLUMN package_hash bytea CHECK (octet_length(package_hash) = 32);
    CREATE INDEX problem_versions_package ON problem_versions(package_hash) WHERE package_hash IS NOT NULL AND superseded_at IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX problem_versions_package;
    ALTER TABLE problem_versions DROP COLUMN statement, DROP COLUMN statement_format, DROP COLUMN package_hash;
  `.execute(db);
}
