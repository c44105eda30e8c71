import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import type { CheckerSetting, ProgramSource } from '../judge/settings.js';
import { REQUEST_LIMITS } from '../limits.js';
import { outputText } from '../util/output-text.js';
import { ProblemInputError, type DataSource, type ProblemDraft, type ProblemLimits } from './draft.js';
import { isProblemId, versionForRun } from './store.js';
import { readTestData } from './test-data.js';

// What editing a stored problem reads: its current version as a draft (its tests' data
// read back by hash as the next version is stored, so an edit copies no bytes it does not
// change), every test's content for its owner, its versions, and the problem a package
// was already stored as.

/** A stored file as a draft's source: its hash and size known, its bytes read when stored. */
function storedSource(db: Db, hash: Buffer, size: number): DataSource {
  return {
    size,
    key: `sha256:${hash.toString('hex')}`,
    hash,
    read: async () => {
      const content = await readTestData(db, hash);
      if (!content) throw new ProblemInputError('a test file of the problem is gone; upload the problem again');
      return content;
    },
  };
}

/** The account's problem's current version as a draft (its name, statement, tests, checker, interactor, limits); undefined when none. */
export async function currentDraft(db: Db, accountId: string, problemId: string): Promise<ProblemDraft | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await db
    .selectFrom('problems as p')
    .innerJoin('problem_versions as v', (j) => j.onRef('v.problem_id', '=', 'p.id').onRef('v.version', '=', 'p.version'))
    .select(['p.name', 'p.version', 'v.statement', 'v.statement_format'])
    .where('p.id', '=', problemId)
    .where('p.account_id', '=', accountId)
    .where('p.deleted_at', 'is', null)
    .executeTakeFirst();
  if (!row) return undefined;
  const version = await versionForRun(db, problemId, row.version);
  if (!version) return undefined;
  const samples = new Set(
    (await db.selectFrom('problem_tests').select('name').where('problem_id', '=', problemId).where('version', '=', row.version).where('sample', '=', true).execute()).map((t) => t.name),
  );
  return {
    name: row.name,
    ...(row.statement !== null && row.statement_format !== null ? { statement: { format: row.statement_format, text: row.statement } } : {}),
    tests: version.testList.map((t) => ({
      name: t.name,
      input: storedSource(db, t.inputHash, t.inputSize),
      answer: storedSource(db, t.answerHash, t.answerSize),
      weight: t.weight,
      sample: samples.has(t.name),
      ...(t.validatorArgs && t.validatorArgs.length > 0 ? { validatorArgs: t.validatorArgs } : {}),
    })),
    checker: version.checker as CheckerSetting,
    interactor: version.interactor as ProgramSource | null,
    limits: version.limits as ProblemLimits,
  };
}

/** Shown to the owner up to this size; past it, the first bytes and its size. */
const SHOWN = REQUEST_LIMITS.inputMaxBytes;

export interface TestContent {
  name: string;
  sample: boolean;
  input: string;
  expected_output: string;
  input_bytes: number;
  expected_output_bytes: number;
  /** Either is longer than shown. */
  cut: boolean;
}

/** Every test of the current version with its content (the first 100,000 bytes of each), for the problem's owner. */
export async function testContents(db: Db, accountId: string, problemId: string): Promise<TestContent[]> {
  if (!isProblemId(problemId)) return [];
  const { rows } = await sql<{ name: string; sample: boolean; input_size: number; answer_size: number; input: Buffer; answer: Buffer }>`
    SELECT t.name, t.sample, t.input_size, t.answer_size,
           substring(i.content from 1 for ${SHOWN}) AS input, substring(a.content from 1 for ${SHOWN}) AS answer
      FROM problems p
      JOIN problem_tests t ON t.problem_id = p.id AND t.version = p.version
      JOIN test_data i ON i.hash = t.input_hash
      JOIN test_data a ON a.hash = t.answer_hash
     WHERE p.id = ${problemId} AND p.account_id = ${accountId} AND p.deleted_at IS NULL
     ORDER BY t.ordinal`.execute(db);
  return rows.map((r) => ({
    name: r.name,
    sample: r.sample,
    input: outputText(r.input, r.input_size > SHOWN),
    expected_output: outputText(r.answer, r.answer_size > SHOWN),
    input_bytes: r.input_size,
    expected_output_bytes: r.answer_size,
    cut: r.input_size > SHOWN || r.answer_size > SHOWN,
  }));
}

export interface VersionLine {
  version: number;
  current: boolean;
  /** Still kept (the current one, or one a queued or running run needs): when it was made, its tests. */
  created_at: Date | null;
  tests: number | null;
  /** Submissions that ran it. */
  submissions: number;
}

/** The problem's versions, newest first: each with the submissions that ran it; the kept ones with their figures. */
export async function problemVersions(db: Db, accountId: string, problemId: string): Promise<VersionLine[]> {
  if (!isProblemId(problemId)) return [];
  const { rows } = await sql<VersionLine>`
    SELECT g.v AS version, g.v = p.version AS current, pv.created_at, pv.tests,
           (SELECT count(*)::int FROM submissions s
             WHERE s.account_id = ${accountId} AND s.run_options->'judge'->'problem' IS NOT NULL
               AND (s.run_options->'judge'->'problem'->>'id') = p.id::text
               AND (s.run_options->'judge'->'problem'->>'version')::int = g.v) AS submissions
      FROM problems p
      CROSS JOIN LATERAL generate_series(p.version, 1, -1) g(v)
      LEFT JOIN problem_versions pv ON pv.problem_id = p.id AND pv.version = g.v
     WHERE p.id = ${problemId} AND p.account_id = ${accountId} AND p.deleted_at IS NULL
     ORDER BY g.v DESC`.execute(db);
  return rows;
}

/** The account's problem whose current version was uploaded from a package of this sha-256; undefined when none. */
export async function problemOfPackage(db: Db, accountId: string, hash: Buffer): Promise<{ id: string; name: string } | undefined> {
  return db
    .selectFrom('problem_versions as v')
    .innerJoin('problems as p', (j) => j.onRef('p.id', '=', 'v.problem_id').onRef('p.version', '=', 'v.version'))
    .select(['p.id', 'p.name'])
    .where('v.package_hash', '=', hash)
    .where('v.superseded_at', 'is', null)
    .where('p.account_id', '=', accountId)
    .where('p.deleted_at', 'is', null)
    .orderBy('p.created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
}
