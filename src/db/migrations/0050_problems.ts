import { type Kysely, sql } from 'kysely';

// Stored problems: a problem belongs to an account and has versions (a PUT makes the
// next one; a submission names the version it ran). A version's tests point at their
// input and answer in test_data, which is content-addressed (sha-256): a file shared by
// several problems, versions or accounts is stored once. A version replaced or a problem
// deleted stays until no queued or running submission names it (src/problems/sweep.ts);
// test data no test points at goes with it. Plans (and accounts, as an override) bound
// the test data an account keeps.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE test_data (
      hash               bytea PRIMARY KEY CHECK (octet_length(hash) = 32),
      size               integer NOT NULL CHECK (size >= 0),
      content            bytea NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now()
    );
    -- lz4 decompresses several times faster than the default pglz, and a runner host
    -- fetches each file once into its cache.
    ALTER TABLE test_data ALTER COLUMN content SET COMPRESSION lz4;

    CREATE TABLE problems (
      id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      account_id         bigint NOT NULL REFERENCES accounts(id),
      name               text NOT NULL,
      version            integer NOT NULL CHECK (version >= 1),
      created_at         timestamptz NOT NULL DEFAULT now(),
      updated_at         timestamptz NOT NULL DEFAULT now(),
      deleted_at         timestamptz
    );
    CREATE INDEX problems_account ON problems(account_id, created_at) WHERE deleted_at IS NULL;
    CREATE INDEX problems_deleted ON problems(deleted_at) WHERE deleted_at IS NOT NULL;

    CREATE TABLE problem_versions (
      problem_id         uuid NOT NULL REFERENCES problems(id) ON DELETE CASCADE,
      version            integer NOT NULL,
      checker            jsonb NOT NULL,
      interactor         jsonb,
      limits             jsonb NOT NULL,
      tests              integer NOT NULL CHECK (tests >= 1),
      -- Test data of this version, each distinct file once.
      data_bytes         bigint NOT NULL,
      created_at         timestamptz NOT NULL DEFAULT now(),
      -- When the next version replaced it; null for the current one.
      superseded_at      timestamptz,
      PRIMARY KEY (problem_id, version)
    );
    CREATE INDEX problem_versions_superseded ON problem_versions(superseded_at) WHERE superseded_at IS NOT NULL;

    CREATE TABLE problem_tests (
      problem_id         uuid NOT NULL,
      version            integer NOT NULL,
      ordinal            integer NOT NULL,
      name               text NOT NULL,
      input_hash         bytea NOT NULL REFERENCES test_data(hash),
      answer_hash        bytea NOT NULL REFERENCES test_data(hash),
      input_size         integer NOT NULL,
      answer_size        integer NOT NULL,
      weight             double precision NOT NULL DEFAULT 1 CHECK (weight >= 0),
      sample             boolean NOT NULL DEFAULT false,
      PRIMARY KEY (problem_id, version, ordinal),
      UNIQUE (problem_id, version, name),
      FOREIGN KEY (problem_id, version) REFERENCES problem_versions(problem_id, version) ON DELETE CASCADE
    );
    CREATE INDEX problem_tests_input ON problem_tests(input_hash);
    CREATE INDEX problem_tests_answer ON problem_tests(answer_hash);

    ALTER TABLE plans ADD COLUMN problem_storage_bytes bigint NOT NULL DEFAULT 67108864 CHECK (problem_storage_bytes >= 0);
    ALTER TABLE accounts ADD COLUMN problem_storage_bytes bigint CHECK (problem_storage_bytes >= 0);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE accounts DROP COLUMN problem_storage_bytes;
    ALTER TABLE plans DROP COLUMN problem_storage_bytes;
    DROP TABLE problem_tests, problem_versions, problems, test_data;
  `.execute(db);
}
