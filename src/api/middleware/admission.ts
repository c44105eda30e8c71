import type Koa from 'koa';
import { catalogue, compilerEntry, offeredIds } from '../../compilers/catalogue.js';
import { availabilityCache } from '../../compilers/deployment.js';
import type { SubmissionMode } from '../../db/schema.js';
import { rejections } from '../../metrics/registry.js';
import { admitSubmission, type AdmissionRequest } from '../../quota/admit.js';
import type { RateFigures } from '../../quota/usage.js';
import type { ProgramRequest } from '../../program/fields.js';
import { ProgramError, readProgram } from '../../program/program.js';
import { rawMember } from '../../util/raw-json.js';
import { readJudging, JudgingError, type Judging, type JudgingRequest } from '../../judge/request.js';
import { problemForRun } from '../../problems/store.js';
import { ApiError } from '../errors.js';
import type { ApiDeps, ApiState, RouteDef } from '../route.js';
import type { RunCodeRequest } from '../schemas.js';

// Limit checks and admission of a run. The per-account limits (rate, pending, monthly,
// per key, tests per request, sandbox time per request) are checked inside the same transaction that stores the
// job (src/quota/admit.ts), so they hold exactly under concurrency; this middleware
// turns a refusal into its HTTP answer. Nothing is counted for a refused request.

/** A run to admit, as every route that admits one (runbox's own and the compatible ones) describes it. */
export type RunToAdmit = Pick<
  AdmissionRequest,
  'compiler' | 'code' | 'input' | 'tests' | 'units' | 'extraParams' | 'extraParamsJson' | 'runOptions' | 'callback' | 'compat'
> & {
  /** Compilers of a judged run's checker and interactor: offered here too, or the run is refused. */
  judgeCompilers?: string[];
};

/** Who a run is admitted for: a key's context, or a marketplace subscriber (no key). */
export type RunCaller = NonNullable<ApiState['auth']>;

/**
 * Admits one run, or throws the ApiError of its refusal (400 compiler_unavailable,
 * too_many_tests, too_much_sandbox_time; 429). `state`, when given, receives the counts
 * behind the rate-limit headers, for a refusal as well as an admission.
 */
export type AdmitRun = (
  auth: RunCaller,
  run: RunToAdmit,
  mode: SubmissionMode,
  state?: { rate?: RateFigures },
) => Promise<{ id: string; units: number; /** performance.now() before it was stored. */ admittedAt: number }>;

/** What admission takes from the deployment (its recipes, retries, runner leases) and the clock. */
export function admissionSettings(deps: Pick<ApiDeps, 'config' | 'clock'>) {
  return {
    recipesDir: deps.config.RUNBOX_RECIPES_DIR,
    maxAttempts: deps.config.RUNBOX_MAX_ATTEMPTS,
    runnerFreshSeconds: deps.config.RUNBOX_LEASE_SECONDS,
    now: deps.clock.now(),
  };
}

export function runAdmitter(deps: ApiDeps): AdmitRun {
  // What the deployment's live runners can run (src/compilers/deployment.ts).
  const availableNow = availabilityCache(deps.db, deps.config);
  return async (auth, run, mode, state) => {
    const available = await availableNow();
    const { judgeCompilers, ...toAdmit } = run;
    assertOffered(run.compiler, deps.config.RUNBOX_RECIPES_DIR, available);
    for (const compiler of judgeCompilers ?? []) assertOffered(compiler, deps.config.RUNBOX_RECIPES_DIR, available, 'the checker or interactor');
    // Before the row can exist: lets a synchronous wait skip its first look-up (src/queue/done.ts).
    const admittedAt = performance.now();
    const result = await admitSubmission(deps.db, {
      accountId: auth.accountId,
      keyId: auth.keyId,
      ...toAdmit,
      mode,
      ...admissionSettings(deps),
    });
    if (result.figures && state) state.rate = result.figures;
    if (!result.admitted) {
      // Refusals that retrying the same request cannot change are 400s, not 429s.
      if (result.reason === 'too_many_tests' || result.reason === 'too_much_sandbox_time') throw new ApiError(400, result.reason, result.message);
      rejections.inc({ reason: result.reason });
      throw new ApiError(429, result.reason, result.message, { 'Retry-After': String(result.retryAfterSeconds) });
    }
    deps.log?.info?.({ submission: result.id, account: auth.accountId, key: auth.keyId, compiler: run.compiler, mode, units: result.units }, 'submission admitted');
    return { id: result.id, units: result.units, admittedAt };
  };
}

/**
 * An identifier no recipe declares is a bad request naming the valid ones; a retired
 * one is 400 compiler_unavailable naming its successor (an id keeps its meaning).
 */
export function assertRunnable(compiler: unknown, recipesDir: string, available?: ReadonlySet<string>): void {
  const cat = catalogue(recipesDir);
  const entry = typeof compiler === 'string' ? cat.entries.get(compiler) : undefined;
  if (!entry) {
    // What this service can run, when it is known and not empty: naming one that is not installed would only lead to a second refusal.
    const runnable = available ? offeredIds(cat).filter((id) => available.has(id)) : [];
    const list = runnable.length > 0 ? `${runnable.join(', ')} (the ones installed here; GET /api/compilers/ lists every identifier)` : `${offeredIds(cat).join(', ')} (GET /api/compilers/ says which are installed here)`;
    throw new ApiError(400, 'invalid_request', `compiler must be one of: ${list}`);
  }
  if (entry.retired) {
    throw new ApiError(400, 'compiler_unavailable', `compiler ${entry.id} is retired; use ${entry.retired.successor} instead (see GET /api/compilers/)`);
  }
}

/** A compiler a request names (its program's, or `of` its checker's or interactor's) is one this service runs now: assertRunnable, then installed here. */
export function assertOffered(compiler: string, recipesDir: string, available: ReadonlySet<string>, of?: 'the checker or interactor'): void {
  assertRunnable(compiler, recipesDir, available);
  if (!available.has(compiler)) {
    // 400, not 503: the request names something this deployment does not offer;
    // retrying it unchanged will not help until an operator installs the image.
    throw new ApiError(400, 'compiler_unavailable', `compiler ${compiler}${of ? ` (of ${of})` : ''} is not installed on this service (see GET /api/compilers/)`);
  }
}

export function admission(route: RouteDef, deps: ApiDeps): Koa.Middleware<ApiState> {
  const admit = runAdmitter(deps);
  return async (ctx, next) => {
    if (!route.admits) return next();
    const body = ctx.state.body as RunCodeRequest;
    const auth = ctx.state.auth;
    if (!auth) throw new Error('admission needs an authenticated route');
    const program = requestProgram(body, body.compiler, deps.config.RUNBOX_RECIPES_DIR);
    const judging = await requestJudging(deps, auth.accountId, body);
    ctx.state.submission = await admit(
      auth,
      {
        compiler: body.compiler,
        ...judgedProgram(program, judging, body),
        extraParams: body.extra_params ?? null,
        ...(body.extra_params !== undefined && ctx.state.rawBody ? rawExtraParams(ctx.state.rawBody) : {}),
      },
      route.admits,
      ctx.state,
    );
    await next();
  };
}

/**
 * The program of a run request (REST body, WebSocket run message): its code and run
 * options, checked against the rules and the compiler's recipe (src/program/program.ts);
 * a broken rule is a 400 naming the field. Nothing is stored or counted before this.
 */
export function requestProgram(req: ProgramRequest, compiler: string, recipesDir: string): Pick<RunToAdmit, 'code' | 'runOptions'> {
  const entry = compilerEntry(compiler, recipesDir);
  // Admission refuses it, naming what this service runs; nothing of the program is stored.
  if (!entry || entry.retired) return { code: req.code ?? '', runOptions: null };
  try {
    const program = readProgram(req, entry);
    return { code: program.code, runOptions: Object.keys(program.options).length > 0 ? program.options : null };
  } catch (err) {
    if (err instanceof ProgramError) throw new ApiError(400, 'invalid_request', err.message);
    throw err;
  }
}

/** A request's judging fields read (src/judge/request.ts), a broken rule as its 400 (a problem not the account's: 404). */
export async function requestJudging(deps: Pick<ApiDeps, 'db'>, accountId: string, req: JudgingRequest): Promise<Judging> {
  try {
    return await readJudging(req, (id) => problemForRun(deps.db, accountId, id));
  } catch (err) {
    if (err instanceof JudgingError) throw new ApiError(err.status, err.status === 404 ? 'not_found' : 'invalid_request', err.message);
    throw err;
  }
}

/** The program and its judging as what admission stores: the tests, and run options with the judge's settings. */
export function judgedProgram(
  program: Pick<RunToAdmit, 'code' | 'runOptions'>,
  judging: Judging,
  req: { limits?: unknown },
): Pick<RunToAdmit, 'code' | 'runOptions' | 'input' | 'tests' | 'units' | 'judgeCompilers'> {
  if (judging.run && req.limits !== undefined) throw new ApiError(400, 'invalid_request', 'give either problem or limits: a problem brings its own limits');
  const options = { ...(program.runOptions ?? {}), ...(judging.judge ? { judge: judging.judge } : {}), ...(judging.run ? { run: judging.run } : {}) };
  return {
    code: program.code,
    runOptions: Object.keys(options).length > 0 ? options : null,
    input: judging.input,
    tests: judging.tests,
    ...(judging.units !== undefined ? { units: judging.units } : {}),
    ...(judging.compilers.length > 0 ? { judgeCompilers: judging.compilers } : {}),
  };
}

/** extra_params as the client wrote it, for results to echo unchanged. */
export function rawExtraParams(rawBody: string): { extraParamsJson?: string } {
  const raw = rawMember(rawBody, 'extra_params');
  return raw === undefined ? {} : { extraParamsJson: raw };
}
