import { sql } from 'kysely';
import { getAccount } from '../accounts/accounts.js';
import type { Db } from '../db/connect.js';
import { lockKeys, TEST_DATA_LOCK } from '../db/locks.js';
import type { CheckerSetting, ProgramSource } from '../judge/settings.js';
import { REQUEST_LIMITS } from '../limits.js';
import { UUID } from '../util/uuid.js';
import type { Feedback } from './feedback.js';
import { currentFiles, StorageAllowance, storageFull } from './allowance.js';
import type { GroupNode, GroupTree } from '../judge/groups.js';
import { type DataSource, type PackageModel, ProblemInputError, type ProblemDraft, type ProblemLimits, type ProblemStatement } from './draft.js';
import type { Includes } from './include.js';
import { collectTestData, sweepVersions } from './sweep.js';
import { putTestData, sha256 } from './test-data.js';
import { plainTiming, timeLimitOf, type TimeLimit, type Timing } from './time-limit.js';

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
  /** An interactive or multi-pass problem's sample: its dialogue, lines starting < (the program reads) and > (it writes), --- between passes. */
  interaction?: string;
}

/** A checker or interactor program as shown: its compiler, convention and file names, not its sources. */
export interface ProgramView {
  compiler: string;
  convention: string;
  files: string[];
  /** A multi-pass problem's validator or interactor: its validation_passes. */
  passes?: number;
}

export interface ProblemSummary {
  id: string;
  name: string;
  version: number;
  feedback: Feedback;
  public: boolean;
  test_count: number;
  data_bytes: number;
  created_at: string;
  updated_at: string;
}

/** A group of the package's tree as shown: its settings and its tests' and subgroups' names, in order. */
export interface ProblemGroupView {
  name: string;
  settings: Record<string, unknown>;
  tests: string[];
  groups: ProblemGroupView[];
}

export interface ProblemView extends ProblemSummary {
  /** Its statement, as the current version keeps it (absent: none). */
  statement?: ProblemStatement;
  limits: ProblemLimits;
  /** The CPU seconds its runs have, and whether the package stated them, a verification derived them, or neither (the default). */
  time_limit: TimeLimit;
  /** Its package's example submissions (submissions/), by path, with the compiler that builds each here. */
  example_submissions: { path: string; compiler: string | null; refusal: string | null; expected: string[] }[];
  checker: { type: string; [option: string]: unknown };
  interactor: ProgramView | null;
  /** A submit-answer problem: a submission is its answer files, NAME.out for test NAME. */
  submit_answer?: true;
  /** Included files' names by language code (a package's include/); absent: none. */
  include?: Record<string, string[]>;
  tests: ProblemTestView[];
  /** A Kattis package's: its tree of test groups (data/ at the root). */
  groups?: ProblemGroupView;
  /** A Kattis package's: its format and type, the keys and paths read and ignored (with why), its timing. */
  package?: PackageModel;
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
/** Who sees what of a problem's runs (src/problems/feedback.ts); unchanged by a write that leaves them out. */
export interface ProblemSettings {
  feedback?: Feedback;
  public?: boolean;
}

export async function saveProblem(db: Db, accountId: string, draft: ProblemDraft, problemId?: string, settings: ProblemSettings = {}): Promise<ProblemView | undefined> {
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
    const submissions = draft.submissions ?? [];
    const allowance = await StorageAllowance.open(trx, accountId, id, [...draft.tests.flatMap((t) => [t.input, t.answer]), ...submissions.flatMap((x) => x.files.map((f) => f.source))]);
    // A problem the account's plan could never judge in one request is refused here, not at every submission.
    await refuseMoreTestsThanPlan(trx, accountId, draft.tests.length);
    // Each file read, hashed, counted and stored in turn: a package is never in memory
    // whole, and the first file past the allowance is never stored.
    const tests: { name: string; input: Buffer; answer: Buffer; inputSize: number; answerSize: number; weight: number; sample: boolean; validatorArgs: string[] | null; interaction: string | null }[] = [];
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
      tests.push({ name: t.name, input: input.hash, answer: answer.hash, inputSize: input.size, answerSize: answer.size, weight: t.weight, sample: t.sample, validatorArgs: t.validatorArgs?.length ? t.validatorArgs : null, interaction: t.interaction ?? null });
    }
    const dataBytes = [...sizes.values()].reduce((a, b) => a + b, 0);
    // The example submissions' files are kept as test data is: counted in the allowance
    // (and the account's storage), stored once; not in the version's data_bytes.
    const submissionFiles: { ordinal: number; name: string; hash: Buffer }[] = [];
    for (const [ordinal, x] of submissions.entries()) for (const f of x.files) submissionFiles.push({ ordinal, name: f.name, hash: (await store(f.source)).hash });
    if (id === undefined) {
      id = (await trx.insertInto('problems').values({ account_id: accountId, name: draft.name, version, ...settings }).returning('id').executeTakeFirstOrThrow()).id;
    } else {
      await trx.updateTable('problems').set({ name: draft.name, version, updated_at: new Date(), ...settings }).where('id', '=', id).execute();
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
        include: draft.include ? JSON.stringify(draft.include) : null,
        submit_answer: draft.submitAnswer === true,

        groups: draft.groups ? JSON.stringify(draft.groups) : null,
        package: draft.package ? JSON.stringify(draft.package) : null,
        tests: tests.length,
        data_bytes: dataBytes,
        timing: JSON.stringify(draft.timing ?? plainTiming(draft.limits.time)),
        statement: draft.statement?.text ?? null,
        statement_format: draft.statement?.format ?? null,
        package_hash: draft.packageHash ?? null,
      })
      .execute();
    if (submissions.length > 0) {
      await trx
        .insertInto('problem_submissions')
        .values(submissions.map((x, ordinal) => ({ problem_id: id!, version, ordinal, path: x.path, compiler: x.compiler, refusal: x.refusal, main: x.main, expected: JSON.stringify(x.expected) })))
        .execute();
      if (submissionFiles.length > 0) await trx.insertInto('problem_submission_files').values(submissionFiles.map((f) => ({ problem_id: id!, version, ...f }))).execute();
    }
    await trx
      .insertInto('problem_tests')
      .values(tests.map((t, ordinal) => ({ problem_id: id!, version, ordinal, name: t.name, input_hash: t.input, answer_hash: t.answer, input_size: t.inputSize, answer_size: t.answerSize, weight: t.weight, sample: t.sample, validator_args: t.validatorArgs, interaction: t.interaction })))
      .execute();
    // The account's total as stored, the checks above notwithstanding.
    const storage = await accountStorage(trx, accountId);
    if (storage.used_bytes > storage.limit_bytes) throw storageFull(storage.used_bytes, storage.limit_bytes, true);
    return id;
  });
  return id === undefined ? undefined : getProblem(db, accountId, id);
}

/** Changes the account's problem's settings (no new version); undefined when it has no such problem. */
export async function setProblemSettings(db: Db, accountId: string, problemId: string, settings: ProblemSettings): Promise<ProblemView | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await db
    .updateTable('problems')
    .set({ ...settings, updated_at: new Date() })
    .where('id', '=', problemId)
    .where('account_id', '=', accountId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row ? getProblem(db, accountId, problemId) : undefined;
}

/** Throws too_many_tests when a judged run of `tests` tests is more than the account's plan takes in one request (runbox_admit's rule). */
async function refuseMoreTestsThanPlan(trx: Db, accountId: string, tests: number): Promise<void> {
  const account = await getAccount(trx, accountId);
  if (!account) return;
  const { limits, overrides } = account;
  // The operator's command that would let it in: the account's own figure when it has one (a plan's would not apply), else its plan's.
  const raise = (option: string, own: number | null) =>
    own !== null
      ? `the operator raises it with runbox-admin account set-limits --account ${accountId} ${option} ${tests}`
      : `the operator raises it with runbox-admin plan upsert --name ${account.plan} ${option} ${tests} (every account on the plan) or runbox-admin account set-limits --account ${accountId} ${option} ${tests} (this account)`;
  if (tests > limits.testsPerRequest) {
    throw new ProblemInputError(
      `the problem has ${tests} tests and the account's plan judges at most ${limits.testsPerRequest} tests per request: every submission would be refused; split it or ask for more tests per request (${raise('--tests-per-request', overrides.testsPerRequest)})`,
      'too_many_tests',
    );
  }
  if (tests > limits.perMinute) {
    throw new ProblemInputError(
      `the problem has ${tests} tests and each counts toward the plan's ${limits.perMinute} submissions per minute: every submission would be refused (${raise('--per-minute', overrides.perMinute)})`,
      'too_many_tests',
    );
  }
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

/** The problems (not deleted) an account may use, each joined to its current version: its own, and with `others` every account's public ones. */
function currentProblems(db: Db, accountId: string, others: 'own' | 'and public' = 'own') {
  return db
    .selectFrom('problems as p')
    .innerJoin('problem_versions as v', (j) => j.onRef('v.problem_id', '=', 'p.id').onRef('v.version', '=', 'p.version'))
    .where((w) => (others === 'own' ? w('p.account_id', '=', accountId) : w.or([w('p.account_id', '=', accountId), w('p.public', '=', true)])))
    .where('p.deleted_at', 'is', null);
}

const SUMMARY_COLUMNS = ['p.id', 'p.name', 'p.version', 'p.feedback', 'p.public', 'p.created_at', 'p.updated_at', 'v.tests', 'v.data_bytes'] as const;

function summaryOf(r: { id: string; name: string; version: number; feedback: Feedback; public: boolean; created_at: Date; updated_at: Date; tests: number; data_bytes: number | string | bigint }): ProblemSummary {
  return { id: r.id, name: r.name, version: r.version, feedback: r.feedback, public: r.public, test_count: r.tests, data_bytes: Number(r.data_bytes), created_at: iso(r.created_at), updated_at: iso(r.updated_at) };
}

function programView(p: ProgramSource): ProgramView {
  return { compiler: p.compiler, convention: p.convention, files: [...(p.options.main ? [p.options.main] : []), ...(p.options.files ?? []).map((f) => f.name)], ...(p.passes !== undefined ? { passes: p.passes } : {}) };
}

function checkerView(c: CheckerSetting): ProblemView['checker'] {
  if (c.type !== 'program') return { ...c };
  return { type: 'program', ...programView(c) };
}

/** The account's problem (with `others`, or another's public one) with its current version's tests (samples' content shown); undefined when it has none of that id. */
export async function getProblem(db: Db, accountId: string, problemId: string, others: 'own' | 'and public' = 'own'): Promise<ProblemView | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await currentProblems(db, accountId, others)
    .select([...SUMMARY_COLUMNS, 'v.checker', 'v.interactor', 'v.limits', 'v.include', 'v.submit_answer', 'v.derived_time', 'v.groups', 'v.package', 'v.statement', 'v.statement_format'])
    .where('p.id', '=', problemId)
    .executeTakeFirst();
  if (!row) return undefined;
  const tests = await db
    .selectFrom('problem_tests as t')
    .leftJoin('test_data as i', (j) => j.onRef('i.hash', '=', 't.input_hash').on('t.sample', '=', true).on('t.input_size', '<=', SAMPLE_SHOWN_BYTES))
    .leftJoin('test_data as a', (j) => j.onRef('a.hash', '=', 't.answer_hash').on('t.sample', '=', true).on('t.answer_size', '<=', SAMPLE_SHOWN_BYTES))
    .select(['t.name', 't.sample', 't.weight', 't.input_size', 't.answer_size', 'i.content as input', 'a.content as answer', 't.interaction'])
    .where('t.problem_id', '=', problemId)
    .where('t.version', '=', row.version)
    .orderBy('t.ordinal')
    .execute();
  const examples = await db
    .selectFrom('problem_submissions')
    .select(['path', 'compiler', 'refusal', 'expected'])
    .where('problem_id', '=', problemId)
    .where('version', '=', row.version)
    .orderBy('ordinal')
    .execute();
  return {
    ...summaryOf(row),
    ...(row.statement !== null && row.statement_format !== null ? { statement: { format: row.statement_format, text: row.statement } } : {}),
    limits: row.limits as ProblemLimits,
    time_limit: timeLimitOf((row.limits as ProblemLimits).time, row.derived_time),
    example_submissions: examples.map((x) => ({ path: x.path, compiler: x.compiler, refusal: x.refusal, expected: (x.expected as { said: string[] }).said })),
    checker: checkerView(row.checker as CheckerSetting),
    interactor: row.interactor ? programView(row.interactor as ProgramSource) : null,
    ...(row.submit_answer ? { submit_answer: true as const } : {}),
    ...(row.include ? { include: Object.fromEntries(Object.entries(row.include).map(([language, files]) => [language, files.map((f) => f.name)])) } : {}),
    tests: tests.map((t) => ({
      name: t.name,
      sample: t.sample,
      weight: t.weight,
      input_bytes: t.input_size,
      expected_output_bytes: t.answer_size,
      ...(t.input ? { input: t.input.toString('utf8') } : {}),
      ...(t.answer ? { expected_output: t.answer.toString('utf8') } : {}),
      ...(t.interaction !== null ? { interaction: t.interaction } : {}),
    })),
    ...(row.groups ? { groups: groupView((row.groups as GroupTree).root, tests.map((t) => t.name)) } : {}),
    ...(row.package ? { package: row.package as PackageModel } : {}),
  };
}

function groupView(node: GroupNode, names: string[]): ProblemGroupView {
  return {
    name: node.name,
    settings: { ...(node.legacy ?? node.modern ?? {}) },
    tests: node.items.flatMap((i) => ('test' in i ? [names[i.test] ?? String(i.test)] : [])),
    groups: node.items.flatMap((i) => ('group' in i ? [groupView(i.group, names)] : [])),
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
  /** As its runs have them: the time limit stated, else derived, else the default (timeLimitOf). */
  limits: ProblemLimits;
  checker: CheckerSetting;
  interactor: ProgramSource | null;
}

/** The account's problem, or another account's public one (judged under its feedback, billed to the judging account). */
export async function problemForRun(db: Db, accountId: string, problemId: string): Promise<ProblemForRun | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await currentProblems(db, accountId, 'and public')
    .select(['p.id', 'p.version', 'v.tests', 'v.limits', 'v.checker', 'v.interactor', 'v.derived_time'])
    .where('p.id', '=', problemId)
    .executeTakeFirst();
  return row && forRun(row);
}

function forRun(row: { id: string; version: number; tests: number; limits: unknown; checker: unknown; interactor: unknown; derived_time: number | null }): ProblemForRun {
  const limits = row.limits as ProblemLimits;
  // Never the service's 30 s unstated: the package's limit, a verification's, or the stated default.
  const time = timeLimitOf(limits.time, row.derived_time).seconds;
  return { id: row.id, version: row.version, tests: row.tests, limits: { ...limits, time }, checker: row.checker as CheckerSetting, interactor: row.interactor as ProgramSource | null };
}

/** A version's timing (what its package says of its time limit) and the limit a verification derived. */
export async function versionTiming(db: Db, problemId: string, version: number): Promise<{ timing: Timing; derived: number | null; limits: ProblemLimits } | undefined> {
  const row = await db.selectFrom('problem_versions').select(['timing', 'derived_time', 'limits']).where('problem_id', '=', problemId).where('version', '=', version).executeTakeFirst();
  if (!row) return undefined;
  const limits = row.limits as ProblemLimits;
  return { timing: (row.timing as Timing | null) ?? plainTiming(limits.time), derived: row.derived_time, limits };
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
export async function versionForRun(db: Db, problemId: string, version: number): Promise<(ProblemForRun & { testList: StoredTest[]; include?: Includes | null; submitAnswer?: boolean; groups?: GroupTree | null }) | undefined> {
  const row = await db
    .selectFrom('problem_versions')
    .select(['problem_id as id', 'version', 'tests', 'limits', 'checker', 'interactor', 'include', 'submit_answer', 'derived_time', 'groups'])
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
    include: row.include,
    submitAnswer: row.submit_answer,

    groups: (row.groups as GroupTree | null) ?? null,
    testList: tests.map((t) => ({ name: t.name, inputHash: t.input_hash, answerHash: t.answer_hash, inputSize: t.input_size, answerSize: t.answer_size, weight: t.weight, validatorArgs: t.validator_args ?? [] })),
  };
}
