import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { lockKeys, TEST_DATA_LOCK } from '../db/locks.js';
import type { CheckerSetting, ProgramSource } from '../judge/settings.js';
import { REQUEST_LIMITS } from '../limits.js';
import { UUID } from '../util/uuid.js';
import { currentFiles, StorageAllowance, storageFull } from './allowance.js';
import type { DataSource, ProblemDraft, ProblemLimits, ProblemStatement } from './draft.js';
import { collectTestData, sweepVersions } from './sweep.js';
import { putTestData, sha256 } from './test-data.js';

// Stored problems of an account: create, replace (a new version), delete, read, list,
// and what admission and the runner read of one. A write is one transaction under the
// account's lock: refused before anything is read when the declared sizes cannot fit the
// account's storage allowance, the test data then read, counted and stored one file at a
// time (the first one past the allowance stops it: src/problems/allowance.ts), every row
// written, or, on any refusal, nothing.

/** A sample's content is shown with the problem up to this size (others by size only). */
const SAMPLE_SHOWN_BYTES = REQUEST_LIMITS.inputMaxBytes;

export interface ProblemTestView {
  name: string;
  sample: boolean;
  weight: number;
  input_bytes: number;
  expected_output_bytes: number;
  /** Samples only (up to 100,000 bytes): the test's content. */
  input?: string;
  expected_output?: string;
}

/** A checker or interactor program as shown: its compiler, convention and file names, not its sources. */
export interface ProgramView {
  compiler: string;
  convention: string;
  files: string[];
}

export interface ProblemSummary {
  id: string;
  name: string;
  version: number;
  test_count: number;
  data_bytes: number;
  created_at: string;
  updated_at: string;
}

export interface ProblemView extends ProblemSummary {
  /** Its statement, as the current version keeps it (absent: none). */
  statement?: ProblemStatement;
  limits: ProblemLimits;
  checker: { type: string; [option: string]: unknown };
  interactor: ProgramView | null;
  tests: ProblemTestView[];
}

export interface Storage {
  used_bytes: number;
  limit_bytes: number;
}

/** A problem's id as its routes take it: a UUID in lower case. */
export const isProblemId = (id: string) => UUID.test(id) && id === id.toLowerCase();

/** The test data an account's problems keep now (their current versions), each file once, and its limit. */
export async function accountStorage(db: Db, accountId: string): Promise<Storage> {
  const { rows } = await sql<{ used: number; limit: number }>`
    SELECT
      (SELECT coalesce(sum(d.size), 0) FROM test_data d WHERE d.hash IN (${currentFiles(accountId)}))::float8 AS used,
      (SELECT coalesce(a.problem_storage_bytes, pl.problem_storage_bytes) FROM accounts a JOIN plans pl ON pl.name = a.plan
        WHERE a.id = ${accountId})::float8 AS limit
  `.execute(db);
  return { used_bytes: rows[0]!.used, limit_bytes: rows[0]!.limit };
}

/**
 * Stores a problem: a new one (no `problemId`), or the next version of the account's
 * `problemId`. Returns undefined when that problem is not the account's (or is gone).
 */
export async function saveProblem(db: Db, accountId: string, draft: ProblemDraft, problemId?: string): Promise<ProblemView | undefined> {
  if (problemId !== undefined && !isProblemId(problemId)) return undefined;
  const id = await writeProblems(db, accountId, async (trx) => {
    let version = 1;
    let id = problemId;
    if (id !== undefined) {
      const current = await trx.selectFrom('problems').select('version').where('id', '=', id).where('account_id', '=', accountId).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
      if (!current) return undefined;
      version = current.version + 1;
    }
    // Refused from the declared sizes, before anything is inflated, when it cannot fit.
    const allowance = await StorageAllowance.open(trx, accountId, id, draft.tests.flatMap((t) => [t.input, t.answer]));
    // Each file read, hashed, counted and stored in turn: a package is never in memory
    // whole, and the first file past the allowance is never stored.
    const tests: { name: string; input: Buffer; answer: Buffer; inputSize: number; answerSize: number; weight: number; sample: boolean; validatorArgs: string[] | null }[] = [];
    const sizes = new Map<string, number>();
    const store = async (source: DataSource) => {
      const content = await source.read();
      const hash = source.hash ?? sha256(content);
      await allowance.add(hash, content.length);
      await putTestData(trx, content, hash);
      sizes.set(hash.toString('hex'), content.length);
      return { hash, size: content.length };
    };
    for (const t of draft.tests) {
      const input = await store(t.input);
      const answer = await store(t.answer);
      tests.push({ name: t.name, input: input.hash, answer: answer.hash, inputSize: input.size, answerSize: answer.size, weight: t.weight, sample: t.sample, validatorArgs: t.validatorArgs?.length ? t.validatorArgs : null });
    }
    const dataBytes = [...sizes.values()].reduce((a, b) => a + b, 0);
    if (id === undefined) {
      id = (await trx.insertInto('problems').values({ account_id: accountId, name: draft.name, version }).returning('id').executeTakeFirstOrThrow()).id;
    } else {
      await trx.updateTable('problems').set({ name: draft.name, version, updated_at: new Date() }).where('id', '=', id).execute();
      await trx.updateTable('problem_versions').set({ superseded_at: new Date() }).where('problem_id', '=', id).where('superseded_at', 'is', null).execute();
    }
    await trx
      .insertInto('problem_versions')
      .values({
        problem_id: id,
        version,
        checker: JSON.stringify(draft.checker),
        interactor: draft.interactor ? JSON.stringify(draft.interactor) : null,
        limits: JSON.stringify(draft.limits),
        tests: tests.length,
        data_bytes: dataBytes,
        statement: draft.statement?.text ?? null,
        statement_format: draft.statement?.format ?? null,
        package_hash: draft.packageHash ?? null,
      })
      .execute();
    await trx
      .insertInto('problem_tests')
      .values(tests.map((t, ordinal) => ({ problem_id: id!, version, ordinal, name: t.name, input_hash: t.input, answer_hash: t.answer, input_size: t.inputSize, answer_size: t.answerSize, weight: t.weight, sample: t.sample, validator_args: t.validatorArgs })))
      .execute();
    // The account's total as stored, the checks above notwithstanding.
    const storage = await accountStorage(trx, accountId);
    if (storage.used_bytes > storage.limit_bytes) throw storageFull(storage.used_bytes, storage.limit_bytes, true);
    return id;
  });
  return id === undefined ? undefined : getProblem(db, accountId, id);
}

/** Deletes the account's problem; false when it has no such problem. Runs already queued still finish. */
export async function deleteProblem(db: Db, accountId: string, problemId: string): Promise<boolean> {
  if (!isProblemId(problemId)) return false;
  const deleted = await writeProblems(db, accountId, async (trx) => {
    const row = await trx.updateTable('problems').set({ deleted_at: new Date() }).where('id', '=', problemId).where('account_id', '=', accountId).where('deleted_at', 'is', null).returning('id').executeTakeFirst();
    return row ? true : undefined;
  });
  return deleted ?? false;
}

/**
 * A write to the account's problems: one transaction, under the test data's lock (shared:
 * data it is about to point at is not collected meanwhile) and the account's (its storage
 * total is checked exactly). Unless `write` changed nothing (undefined), the versions no
 * run needs any more are swept with it, and then the data they alone held is collected.
 */
async function writeProblems<T>(db: Db, accountId: string, write: (trx: Db) => Promise<T | undefined>): Promise<T | undefined> {
  let candidates: Buffer[] = [];
  const written = await db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock_shared(${TEST_DATA_LOCK.class}, ${TEST_DATA_LOCK.key})`.execute(trx);
    await lockKeys(trx, ['problemAccount', accountId]);
    const done = await write(trx);
    if (done !== undefined) candidates = await sweepVersions(trx, accountId);
    return done;
  });
  if (written !== undefined) await collectTestData(db, candidates);
  return written;
}

const iso = (d: Date) => new Date(d).toISOString();

/** The account's problems (not deleted), each joined to its current version. */
function currentProblems(db: Db, accountId: string) {
  return db
    .selectFrom('problems as p')
    .innerJoin('problem_versions as v', (j) => j.onRef('v.problem_id', '=', 'p.id').onRef('v.version', '=', 'p.version'))
    .where('p.account_id', '=', accountId)
    .where('p.deleted_at', 'is', null);
}

const SUMMARY_COLUMNS = ['p.id', 'p.name', 'p.version', 'p.created_at', 'p.updated_at', 'v.tests', 'v.data_bytes'] as const;

function summaryOf(r: { id: string; name: string; version: number; created_at: Date; updated_at: Date; tests: number; data_bytes: number | string | bigint }): ProblemSummary {
  return { id: r.id, name: r.name, version: r.version, test_count: r.tests, data_bytes: Number(r.data_bytes), created_at: iso(r.created_at), updated_at: iso(r.updated_at) };
}

function programView(p: ProgramSource): ProgramView {
  return { compiler: p.compiler, convention: p.convention, files: [...(p.options.main ? [p.options.main] : []), ...(p.options.files ?? []).map((f) => f.name)] };
}

function checkerView(c: CheckerSetting): ProblemView['checker'] {
  if (c.type !== 'program') return { ...c };
  return { type: 'program', ...programView(c) };
}

/** The account's problem with its current version's tests (samples' content shown); undefined when it has none of that id. */
export async function getProblem(db: Db, accountId: string, problemId: string): Promise<ProblemView | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await currentProblems(db, accountId)
    .select([...SUMMARY_COLUMNS, 'v.checker', 'v.interactor', 'v.limits', 'v.statement', 'v.statement_format'])
    .where('p.id', '=', problemId)
    .executeTakeFirst();
  if (!row) return undefined;
  const tests = await db
    .selectFrom('problem_tests as t')
    .leftJoin('test_data as i', (j) => j.onRef('i.hash', '=', 't.input_hash').on('t.sample', '=', true).on('t.input_size', '<=', SAMPLE_SHOWN_BYTES))
    .leftJoin('test_data as a', (j) => j.onRef('a.hash', '=', 't.answer_hash').on('t.sample', '=', true).on('t.answer_size', '<=', SAMPLE_SHOWN_BYTES))
    .select(['t.name', 't.sample', 't.weight', 't.input_size', 't.answer_size', 'i.content as input', 'a.content as answer'])
    .where('t.problem_id', '=', problemId)
    .where('t.version', '=', row.version)
    .orderBy('t.ordinal')
    .execute();
  return {
    ...summaryOf(row),
    ...(row.statement !== null && row.statement_format !== null ? { statement: { format: row.statement_format, text: row.statement } } : {}),
    limits: row.limits as ProblemLimits,
    checker: checkerView(row.checker as CheckerSetting),
    interactor: row.interactor ? programView(row.interactor as ProgramSource) : null,
    tests: tests.map((t) => ({
      name: t.name,
      sample: t.sample,
      weight: t.weight,
      input_bytes: t.input_size,
      expected_output_bytes: t.answer_size,
      ...(t.input ? { input: t.input.toString('utf8') } : {}),
      ...(t.answer ? { expected_output: t.answer.toString('utf8') } : {}),
    })),
  };
}

/** The account's problems, newest first. */
export async function problemSummaries(db: Db, accountId: string): Promise<ProblemSummary[]> {
  const rows = await currentProblems(db, accountId).select(SUMMARY_COLUMNS).orderBy('p.created_at', 'desc').orderBy('p.id').execute();
  return rows.map(summaryOf);
}

/** The account's problems, newest first, and its storage. */
export async function listProblems(db: Db, accountId: string): Promise<{ problems: ProblemSummary[]; storage: Storage }> {
  return { problems: await problemSummaries(db, accountId), storage: await accountStorage(db, accountId) };
}

/** What admission reads of the account's problem: its current version, tests, limits and programs' compilers. */
export interface ProblemForRun {
  id: string;
  version: number;
  tests: number;
  limits: ProblemLimits;
  checker: CheckerSetting;
  interactor: ProgramSource | null;
}

export async function problemForRun(db: Db, accountId: string, problemId: string): Promise<ProblemForRun | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await currentProblems(db, accountId)
    .select(['p.id', 'p.version', 'v.tests', 'v.limits', 'v.checker', 'v.interactor'])
    .where('p.id', '=', problemId)
    .executeTakeFirst();
  return row && forRun(row);
}

function forRun(row: { id: string; version: number; tests: number; limits: unknown; checker: unknown; interactor: unknown }): ProblemForRun {
  return { id: row.id, version: row.version, tests: row.tests, limits: row.limits as ProblemLimits, checker: row.checker as CheckerSetting, interactor: row.interactor as ProgramSource | null };
}

/** A test of a version as the runner reads it: data by hash (its cache's names). */
export interface StoredTest {
  name: string;
  inputHash: Buffer;
  answerHash: Buffer;
  inputSize: number;
  answerSize: number;
  weight: number;
  /** Its output validator's arguments (a Kattis package's group's); none when absent. */
  validatorArgs?: string[];
}

/** The version a submission ran, whole; undefined once it is gone (replaced and swept). */
export async function versionForRun(db: Db, problemId: string, version: number): Promise<(ProblemForRun & { testList: StoredTest[] }) | undefined> {
  const row = await db
    .selectFrom('problem_versions')
    .select(['problem_id as id', 'version', 'tests', 'limits', 'checker', 'interactor'])
    .where('problem_id', '=', problemId)
    .where('version', '=', version)
    .executeTakeFirst();
  if (!row) return undefined;
  const tests = await db
    .selectFrom('problem_tests')
    .select(['name', 'input_hash', 'answer_hash', 'input_size', 'answer_size', 'weight', 'validator_args'])
    .where('problem_id', '=', problemId)
    .where('version', '=', version)
    .orderBy('ordinal')
    .execute();
  return {
    ...forRun(row),
    testList: tests.map((t) => ({ name: t.name, inputHash: t.input_hash, answerHash: t.answer_hash, inputSize: t.input_size, answerSize: t.answer_size, weight: t.weight, validatorArgs: t.validator_args ?? [] })),
  };
}
