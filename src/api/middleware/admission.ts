import type Koa from 'koa';
import { availabilityCache } from '../../compilers/deployment.js';
import { rejections } from '../../metrics/registry.js';
import { admitSubmission } from '../../quota/admit.js';
import { ApiError } from '../errors.js';
import type { ApiDeps, ApiState, RouteDef } from '../route.js';
import type { RunCodeRequest } from '../schemas.js';

// Limit checks and admission of a run. The per-account limits (rate, pending, monthly,
// per key, tests per request) are checked inside the same transaction that stores the
// job (src/quota/admit.ts), so they hold exactly under concurrency; this middleware
// turns a refusal into its HTTP answer. Nothing is counted for a refused request.

export function admission(route: RouteDef, deps: ApiDeps): Koa.Middleware<ApiState> {
  // What the deployment's live runners can run (src/compilers/deployment.ts).
  const availableNow = availabilityCache(deps.db, deps.config.RUNBOX_IMAGES_DIR, deps.config.RUNBOX_LEASE_SECONDS);
  return async (ctx, next) => {
    if (!route.admits) return next();
    const body = ctx.state.body as RunCodeRequest;
    const auth = ctx.state.auth;
    if (!auth) throw new Error('admission needs an authenticated route');
    if (body.input !== undefined && body.tests !== undefined) {
      throw new ApiError(400, 'invalid_request', 'give either input or tests, not both');
    }
    if (!(await availableNow()).has(body.compiler)) {
      // 400, not 503: the request names something this deployment does not offer;
      // retrying it unchanged will not help until an operator installs the image.
      throw new ApiError(400, 'compiler_unavailable', `compiler ${body.compiler} is not installed on this service (see GET /api/compilers/)`);
    }
    const result = await admitSubmission(deps.db, {
      accountId: auth.accountId,
      keyId: auth.keyId,
      compiler: body.compiler,
      code: body.code,
      input: body.tests ? null : (body.input ?? null),
      tests: body.tests ?? null,
      extraParams: body.extra_params ?? null,
      mode: route.admits,
      maxAttempts: deps.config.RUNBOX_MAX_ATTEMPTS,
      runnerFreshSeconds: deps.config.RUNBOX_LEASE_SECONDS,
      now: deps.clock.now(),
    });
    if (result.figures) ctx.state.rate = result.figures;
    if (!result.admitted) {
      if (result.reason === 'too_many_tests') throw new ApiError(400, result.reason, result.message);
      rejections.inc({ reason: result.reason });
      throw new ApiError(429, result.reason, result.message, { 'Retry-After': String(result.retryAfterSeconds) });
    }
    ctx.state.submission = { id: result.id, units: result.units };
    deps.log?.info?.({ submission: result.id, account: auth.accountId, key: auth.keyId, compiler: body.compiler, mode: route.admits, units: result.units }, 'submission admitted');
    await next();
  };
}
