import { sql } from 'kysely';
import type { Db } from '../db/connect.js';
import { readJudging, JudgingError } from '../judge/request.js';
import { PROBLEM_TIME_DEFAULTS, VERIFY_LIMITS } from '../limits.js';
import type { Expectation } from '../problems/example-submissions.js';
import { deriveTimeLimit, timeLimitOf, withinService, type TimeLimitSource } from '../problems/time-limit.js';
import { findingOf } from '../problems/verify.js';
import { isProblemId, problemForRun, versionTiming, type ProblemForRun } from '../problems/store.js';
import type { RunResult } from '../result.js';
import { ApiError } from './errors.js';
import { judgedProgram, requestProgram, type AdmitRun, type RunCaller } from './middleware/admission.js';

// A problem's background checks, each run an ordinary judged submission admitted, billed
// and bounded as any (src/api/middleware/admission.ts), through the queue:
// - a verification: every example submission of the version judged, as problemtools'
//   verifyproblem does. Without a stated time limit, first the submissions that bound it
//   from below (accepted ones) at PROBLEM_TIME_DEFAULTS.measureSeconds; the limit derived
//   from the slowest of them (src/problems/time-limit.ts) is stored with the version, and
//   the others are judged at it.
// - a rejudge: the account's newest submissions of the earlier version judged again on
//   this one; the problem lists the verdicts that changed.
// advanceChecks moves them on: admits what is due (a run the account's rate or pending
// limit holds back waits for the next turn; one refused for good says why), ends a phase
// when its runs have ended, and stores the report at the end. Each API process calls it
// every VERIFY_LIMITS.advanceEveryMs; a check is locked while one advances it.

export interface CheckCaller {
  accountId: string;
  keyId: string | null;
}

export interface CheckRunView {
  /** A verification's example submission (its path below submissions/), or a rejudge's earlier submission. */
  path?: string;
  previous_id?: string;
  submission_id: string | null;
  state: 'waiting' | 'queued' | 'running' | 'finished' | 'failed' | 'refused';
  expected?: string[];
  verdict: string | null;
  /** The format's verdict (AC, WA, TLE, RTE, CE, JE). */
  code?: string | null;
  /** CPU seconds of its slowest test. */
  time: number | null;
  score?: number | null;
  mismatches?: string[];
  previous_verdict?: string | null;
  changed?: boolean;
  refusal?: string | null;
}

export interface CheckView {
  id: string;
  kind: 'verify' | 'rejudge';
  problem_id: string;
  version: number;
  state: 'running' | 'done';
  phase: number;
  time_limit: { seconds: number; source: TimeLimitSource; slowest_accepted?: number | null; ac_to_time_limit?: number; time_limit_to_tle?: number; note?: string };
  runs: CheckRunView[];
  /** Runs judged whose verdict differs from the one expected (verification), or changed (rejudge). */
  mismatches: number;
  /** Runs that could not be judged (no compiler here, a refusal): each says why. */
  not_judged: number;
  created_at: string;
  finished_at: string | null;
}

/** Starts a verification of the account's problem's current version; undefined when it has none of that id. */
export async function startVerification(db: Db, caller: CheckCaller, problemId: string): Promise<string | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const p = await problemForRun(db, caller.accountId, problemId);
  if (!p) return undefined;
  const timing = await versionTiming(db, problemId, p.version);
  const examples = await db.selectFrom('problem_submissions').select(['ordinal', 'refusal', 'expected']).where('problem_id', '=', problemId).where('version', '=', p.version).orderBy('ordinal').execute();
  if (examples.length === 0) throw new ApiError(400, 'no_example_submissions', `problem ${problemId} (version ${p.version}) has no example submissions: a package keeps them under submissions/<verdict>/`);
  const stated = timing?.timing.stated !== undefined;
  return db.transaction().execute(async (trx) => {
    const check = await trx
      .insertInto('problem_checks')
      .values({ kind: 'verify', problem_id: problemId, version: p.version, account_id: caller.accountId, key_id: caller.keyId, time_limit: stated ? null : PROBLEM_TIME_DEFAULTS.measureSeconds, report: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx
      .insertInto('problem_check_runs')
      .values(examples.map((x, ordinal) => ({ check_id: check.id, ordinal, phase: stated || (x.expected as Expectation).timeLimit === 'lower' ? 1 : 2, submission_ordinal: x.ordinal, refusal: x.refusal })))
      .execute();
    return check.id;
  });
}

/** Starts a rejudge on `version` of the account's newest `count` finished submissions of problem `problemId`'s earlier versions. */
export async function startRejudge(db: Db, caller: CheckCaller, problemId: string, version: number, count: number): Promise<string | null> {
  const previous = await db
    .selectFrom('submissions')
    .select('id')
    .where('account_id', '=', caller.accountId)
    .where('state', '=', 'finished')
    .where(sql<boolean>`run_options->'judge'->'problem'->>'id' = ${problemId}`)
    .where(sql<boolean>`(run_options->'judge'->'problem'->>'version')::int < ${version}`)
    // Not the checks' own runs.
    .where(sql<boolean>`NOT (coalesce(extra_params::jsonb, '{}'::jsonb) ? 'problem_check')`)
    .orderBy('created_at', 'desc')
    .limit(Math.min(count, VERIFY_LIMITS.rejudgeMax))
    .execute();
  if (previous.length === 0) return null;
  return db.transaction().execute(async (trx) => {
    const check = await trx
      .insertInto('problem_checks')
      .values({ kind: 'rejudge', problem_id: problemId, version, account_id: caller.accountId, key_id: caller.keyId, time_limit: null, report: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    await trx.insertInto('problem_check_runs').values(previous.map((s, ordinal) => ({ check_id: check.id, ordinal, phase: 1, previous_id: s.id }))).execute();
    return check.id;
  });
}

/** Advances the running checks (or the one `checkId`); returns how many it looked at. */
export async function advanceChecks(db: Db, admit: AdmitRun, recipesDir: string, checkId?: string): Promise<number> {
  const ids = await db
    .selectFrom('problem_checks')
    .select('id')
    .where('state', '=', 'running')
    .$if(checkId !== undefined, (q) => q.where('id', '=', checkId!))
    .orderBy('created_at')
    .limit(50)
    .execute();
  for (const { id } of ids) await advanceOne(db, admit, recipesDir, id);
  return ids.length;
}

type CheckRow = { id: string; kind: 'verify' | 'rejudge'; problem_id: string; version: number; account_id: string; key_id: string | null; phase: number; time_limit: number | null };

async function advanceOne(db: Db, admit: AdmitRun, recipesDir: string, id: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const check = (await trx
      .selectFrom('problem_checks')
      .select(['id', 'kind', 'problem_id', 'version', 'account_id', 'key_id', 'phase', 'time_limit'])
      .where('id', '=', id)
      .where('state', '=', 'running')
      .forUpdate()
      .skipLocked()
      .executeTakeFirst()) as CheckRow | undefined;
    if (!check) return;
    const runs = await trx.selectFrom('problem_check_runs').selectAll().where('check_id', '=', id).where('phase', '=', check.phase).orderBy('ordinal').execute();
    const due = runs.filter((r) => r.job_id === null && r.refusal === null);
    if (due.length > 0) {
      const problem = await versionForCheck(trx, check);
      for (const run of due) {
        const admitted = await admitRun(trx, admit, recipesDir, check, problem, run);
        // Held back by the account's rate or pending limit: the rest wait for the next turn too.
        if (admitted === 'wait') break;
        await trx.updateTable('problem_check_runs').set(admitted).where('check_id', '=', id).where('ordinal', '=', run.ordinal).execute();
      }
      return;
    }
    const ended = await trx
      .selectFrom('problem_check_runs as r')
      .leftJoin('submissions as s', 's.id', 'r.job_id')
      .select(({ fn }) => fn.countAll<string>().as('open'))
      .where('r.check_id', '=', id)
      .where('r.phase', '=', check.phase)
      .where('r.refusal', 'is', null)
      .where((eb) => eb.or([eb('s.state', 'in', ['queued', 'running']), eb('s.id', 'is', null)]))
      .executeTakeFirstOrThrow();
    if (Number(ended.open) > 0) return;
    if (check.kind === 'verify' && check.phase === 1) {
      const view = await checkView(trx, check.id);
      const later = await trx.selectFrom('problem_check_runs').select('ordinal').where('check_id', '=', id).where('phase', '=', 2).executeTakeFirst();
      if (view!.time_limit.source !== 'stated') {
        // The limit derived from the slowest accepted run; the others are judged at it.
        const derived = view!.time_limit.source === 'derived' ? view!.time_limit.seconds : null;
        await trx.updateTable('problem_versions').set({ derived_time: derived }).where('problem_id', '=', check.problem_id).where('version', '=', check.version).execute();
        if (later) {
          await trx.updateTable('problem_checks').set({ phase: 2, time_limit: derived }).where('id', '=', id).execute();
          return;
        }
      }
    }
    const report = await checkView(trx, id);
    await trx.updateTable('problem_checks').set({ state: 'done', finished_at: new Date(), report: JSON.stringify({ ...report, state: 'done', finished_at: new Date().toISOString() }) }).where('id', '=', id).execute();
  });
}

async function versionForCheck(db: Db, check: CheckRow): Promise<ProblemForRun | undefined> {
  const p = await problemForRun(db, check.account_id, check.problem_id);
  // A newer version replaced it meanwhile: its runs are refused, not judged on another version.
  if (!p || p.version !== check.version) return undefined;
  return check.time_limit === null ? p : { ...p, limits: { ...p.limits, time: check.time_limit } };
}

/** Admits one run of a check: its job, or why not (refusal), or 'wait' (the account's rate or pending limit). */
async function admitRun(
  db: Db,
  admit: AdmitRun,
  recipesDir: string,
  check: CheckRow,
  problem: ProblemForRun | undefined,
  run: { ordinal: number; submission_ordinal: number | null; previous_id: string | null },
): Promise<{ job_id: string } | { refusal: string } | 'wait'> {
  if (!problem) return { refusal: `version ${check.version} of the problem is no longer its current one` };
  const program = await programOf(db, check, run);
  if ('refusal' in program) return program;
  try {
    const code = requestProgram(program.request, program.compiler, recipesDir);
    const judging = await readJudging({ problem: problem.id, stop_on_failure: true }, async () => problem);
    const admitted = await admit(
      callerOf(check),
      { compiler: program.compiler, ...judgedProgram(code, judging, {}), extraParams: { problem_check: check.id, [check.kind === 'verify' ? 'example' : 'rejudge_of']: program.label } },
      'async',
    );
    return { job_id: admitted.id };
  } catch (err) {
    if (err instanceof ApiError && err.status === 429 && (err.code === 'rate_limited' || err.code === 'too_many_pending')) return 'wait';
    if (err instanceof ApiError || err instanceof JudgingError) return { refusal: `${err instanceof ApiError ? `${err.code}: ` : ''}${err.message}` };
    throw err;
  }
}

/** Who the check's runs are admitted for: the key that started it (its monthly limit counts them), or the account alone. */
function callerOf(check: CheckRow): RunCaller {
  const common = { accountId: String(check.account_id), keyMonthlyLimit: null, revoked: false as const, allowedOrigins: [] };
  return check.key_id === null ? { kind: 'marketplace', keyId: null, subscriber: '', plan: '', ...common } : { kind: 'api', keyId: String(check.key_id), ...common };
}

type ProgramOf = { compiler: string; request: { code?: string; files?: { name: string; content: string; encoding: 'base64' }[]; main?: string }; label: string } | { refusal: string };

/** The program a check's run judges: an example submission's files, or an earlier submission's program as it was sent. */
async function programOf(db: Db, check: CheckRow, run: { submission_ordinal: number | null; previous_id: string | null }): Promise<ProgramOf> {
  if (run.previous_id !== null) {
    const s = await db.selectFrom('submissions').select(['compiler', 'code', 'run_options']).where('id', '=', run.previous_id).executeTakeFirst();
    if (!s) return { refusal: `submission ${run.previous_id} is gone` };
    const options = (s.run_options ?? {}) as { main?: string; files?: { name: string; content_base64: string }[] };
    const main = options.main ?? null;
    const request = options.files?.length
      ? { files: [...(main ? [{ name: main, content: Buffer.from(s.code).toString('base64'), encoding: 'base64' as const }] : []), ...options.files.map((f) => ({ name: f.name, content: f.content_base64, encoding: 'base64' as const }))], ...(main ? { main } : {}) }
      : main
        ? { files: [{ name: main, content: Buffer.from(s.code).toString('base64'), encoding: 'base64' as const }], main }
        : { code: s.code };
    return { compiler: s.compiler, request, label: run.previous_id };
  }
  const x = await db.selectFrom('problem_submissions').select(['path', 'compiler', 'main', 'refusal']).where('problem_id', '=', check.problem_id).where('version', '=', check.version).where('ordinal', '=', run.submission_ordinal!).executeTakeFirst();
  if (!x || x.compiler === null) return { refusal: x?.refusal ?? 'the example submission is gone' };
  const files = await db
    .selectFrom('problem_submission_files as f')
    .innerJoin('test_data as d', 'd.hash', 'f.hash')
    .select(['f.name', 'd.content'])
    .where('f.problem_id', '=', check.problem_id)
    .where('f.version', '=', check.version)
    .where('f.ordinal', '=', run.submission_ordinal!)
    .orderBy('f.name')
    .execute();
  return { compiler: x.compiler, request: { files: files.map((f) => ({ name: f.name, content: f.content.toString('base64'), encoding: 'base64' })), main: x.main }, label: x.path };
}

/** A check of the account's problem: the newest one, or `checkId`; undefined when there is none. */
export async function findCheck(db: Db, accountId: string, problemId: string, kind: 'verify' | 'rejudge', checkId?: string): Promise<string | undefined> {
  if (!isProblemId(problemId)) return undefined;
  const row = await db
    .selectFrom('problem_checks')
    .select('id')
    .where('account_id', '=', accountId)
    .where('problem_id', '=', problemId)
    .where('kind', '=', kind)
    .$if(checkId !== undefined, (q) => q.where('id', '=', checkId!))
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/** A check as it stands: its stored report once done, else read from its runs now. */
export async function checkView(db: Db, id: string): Promise<CheckView | undefined> {
  const check = await db.selectFrom('problem_checks').selectAll().where('id', '=', id).executeTakeFirst();
  if (!check) return undefined;
  if (check.state === 'done' && check.report) return check.report as CheckView;
  const runs = await db
    .selectFrom('problem_check_runs as r')
    .leftJoin('submissions as s', 's.id', 'r.job_id')
    .leftJoin('problem_submissions as x', (j) => j.on('x.problem_id', '=', check.problem_id).on('x.version', '=', check.version).onRef('x.ordinal', '=', 'r.submission_ordinal'))
    .leftJoin('submissions as prev', 'prev.id', 'r.previous_id')
    .select(['r.ordinal', 'r.phase', 'r.job_id', 'r.refusal', 'r.previous_id', 's.state', 's.result', 'x.path', 'x.expected', 'prev.result as previous_result'])
    .where('r.check_id', '=', id)
    .orderBy('r.ordinal')
    .execute();
  const timing = await versionTiming(db, check.problem_id, check.version);
  const views: (CheckRunView & { lower: boolean; passed: boolean })[] = runs.map((r) => {
    const result = r.state === 'finished' || r.state === 'failed' ? (r.result as RunResult | null) : null;
    const state: CheckRunView['state'] = r.refusal !== null ? 'refused' : r.job_id === null ? 'waiting' : (r.state ?? 'queued');
    const base = { submission_id: r.job_id, state, refusal: r.refusal };
    if (check.kind === 'rejudge') {
      const previous = (r.previous_result as RunResult | null)?.verdict ?? null;
      const verdict = result?.verdict ?? null;
      return { ...base, previous_id: r.previous_id!, previous_verdict: previous, verdict, time: slowest(result), changed: result !== null && verdict !== previous, lower: false, passed: false };
    }
    const expected = r.expected as Expectation;
    const finding = result ? findingOf(expected, result) : null;
    return {
      ...base,
      path: r.path!,
      expected: expected.said,
      verdict: finding?.verdict ?? null,
      code: finding?.code ?? null,
      time: finding?.time ?? null,
      score: finding?.score ?? null,
      mismatches: r.refusal !== null ? [`not judged: ${r.refusal}`] : (finding?.mismatches ?? []),
      lower: expected.timeLimit === 'lower' && r.phase === 1,
      passed: finding !== null && finding.mismatches.length === 0,
    };
  });
  const t = timing!.timing;
  let timeLimit: CheckView['time_limit'];
  if (check.kind === 'rejudge') timeLimit = timeLimitOf(timing!.limits.time, timing!.derived);
  else if (t.stated) timeLimit = { seconds: t.stated.seconds, source: 'stated' };
  else {
    // problemtools' T_ac: the slowest of the runs that bound the limit from below and met their expectation.
    const times = views.filter((v) => v.lower && v.passed && v.time !== null).map((v) => v.time!);
    const slowest = times.length > 0 ? Math.max(...times) : null;
    const exact = slowest === null ? null : deriveTimeLimit(t, slowest);
    timeLimit =
      exact !== null && withinService(exact)
        ? { seconds: exact, source: 'derived', slowest_accepted: slowest }
        : {
            ...timeLimitOf(undefined, null),
            slowest_accepted: slowest,
            note: exact === null ? 'no accepted submission met its expectation: the limit stays the default' : `the derived limit, ${exact} s, is above the service's; the limit stays the default`,
          };
    if (check.phase === 1 && check.state === 'running') timeLimit.note ??= 'measuring the accepted submissions';
  }
  if (check.kind === 'verify') Object.assign(timeLimit, { ac_to_time_limit: t.acToTimeLimit, time_limit_to_tle: t.timeLimitToTle });
  return {
    id: check.id,
    kind: check.kind,
    problem_id: check.problem_id,
    version: check.version,
    state: check.state,
    phase: check.phase,
    time_limit: timeLimit,
    runs: views.map(({ lower: _l, passed: _p, ...v }) => v),
    mismatches: views.filter((v) => v.state !== 'refused' && (check.kind === 'rejudge' ? v.changed : (v.mismatches?.length ?? 0) > 0)).length,
    not_judged: views.filter((v) => v.state === 'refused').length,
    created_at: new Date(check.created_at).toISOString(),
    finished_at: check.finished_at ? new Date(check.finished_at).toISOString() : null,
  };
}

const slowest = (r: RunResult | null): number | null => {
  const times = (r?.tests ?? []).map((t) => t.time).filter((t): t is number => t !== null);
  return times.length > 0 ? Math.max(...times) : null;
};
