import { type Kysely, sql } from 'kysely';

// A package's example submissions kept with its version (their files in test_data, counted
// in the account's storage like its tests), the version's timing (what the package says of
// its time limit, and the limit a verification derived), and the background checks of a
// problem: a verification (every example submission judged) or a rejudge (the account's
// submissions of the earlier version judged again on this one), each run an ordinary
// judged submission.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE problem_versions ADD COLUMN timing jsonb;
    ALTER TABLE problem_versions ADD COLUMN derived_time double precision;

    CREATE TABLE problem_submissions (
      problem_id         uuid NOT NULL,
      version            integer NOT NULL,
      ordinal            integer NOT NULL,
      -- Its path below submissions/ (accepted/sol.py, or a directory's).
      path               text NOT NULL,
      -- The compiler that builds it here; null when none does (refusal says why).
      compiler           text,
      refusal            text,
      main               text NOT NULL,
      expected           jsonb NOT NULL,
      PRIMARY KEY (problem_id, version, ordinal),
      FOREIGN KEY (problem_id, version) REFERENCES problem_versions(problem_id, version) ON DELETE CASCADE
    );
    CREATE TABLE problem_submission_files (
      problem_id         uuid NOT NULL,
      version            integer NOT NULL,
      ordinal            integer NOT NULL,
      name               text NOT NULL,
      hash               bytea NOT NULL REFERENCES test_data(hash),
      PRIMARY KEY (problem_id, version, ordinal, name),
      FOREIGN KEY (problem_id, version, ordinal) REFERENCES problem_submissions(problem_id, version, ordinal) ON DELETE CASCADE
    );
    CREATE INDEX problem_submission_files_hash ON problem_submission_files(hash);

    CREATE TABLE problem_checks (
      id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      kind               text NOT NULL CHECK (kind IN ('verify', 'rejudge')),
      problem_id         uuid NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
      version            integer NOT NULL,
      account_id         bigint NOT NULL REFERENCES accounts(id),
      key_id             bigint,
      state              text NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done')),
      -- 1: the runs that bound the time limit from below; 2: the others, at the limit found.
      phase              integer NOT NULL DEFAULT 1,
      -- CPU seconds the current phase runs at; null: the version's own limit.
      time_limit         double precision,
      report             jsonb,
      created_at         timestamptz NOT NULL DEFAULT now(),
      finished_at        timestamptz
    );
    CREATE INDEX problem_checks_problem ON problem_checks(problem_id, created_at);
    CREATE INDEX problem_checks_running ON problem_checks(created_at) WHERE state = 'running';

    CREATE TABLE problem_check_runs (
      check_id           uuid NOT NULL REFERENCES problem_checks(id) ON DELETE CASCADE,
      ordinal            integer NOT NULL,
      phase              integer NOT NULL,
      -- A verification's example submission (its ordinal), or a rejudge's earlier submission.
      submission_ordinal integer,
      previous_id        uuid,
      -- The judged submission admitted for it; null until admitted.
      job_id             uuid,
      -- Why it was not judged (a refusal of admission, no compiler here).
      refusal            text,
      PRIMARY KEY (check_id, ordinal)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE problem_check_runs, problem_checks, problem_submission_files, problem_submissions;
    ALTER TABLE problem_versions DROP COLUMN derived_time;
    ALTER TABLE problem_versions DROP COLUMN timing;
  `.execute(db);
}
