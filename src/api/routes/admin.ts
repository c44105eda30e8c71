import { sql } from 'kysely';
import Type, { type TSchema } from 'typebox';
import { createAccount, getAccount, listAccounts, setAccountLimits, setAccountPlan } from '../../accounts/accounts.js';
import { AccountInputError } from '../../accounts/errors.js';
import { createKey, listKeys, listKeysPage, revokeKey, setKeyLimit, setKeyOrigins, setKeyStudent } from '../../accounts/keys.js';
import type { KeyKind } from '../../db/schema.js';
import { MAX_MONTHLY_LIMIT, type PlanLimits } from '../../limits.js';
import { reapExpired } from '../../queue/reap.js';
import { usageRecord } from '../../quota/usage.js';
import { monthOf } from '../../util/clock.js';
import { pageOf, type Page, type PageRequest } from '../../util/pages.js';
import { ApiError } from '../errors.js';
import { readMaintenance, setMaintenance } from '../maintenance.js';
import type { ApiContext, ApiDeps, RouteDef } from '../route.js';

// /api/admin/*: accounts, keys, usage and maintenance for operators, with an admin
// key only (`runbox-admin admin-key create`); an account's API key gets 403. The same
// operations as the admin CLI, over HTTP. Never behind maintenance mode: it is how
// maintenance is switched off.
//
// Lists come a page at a time, newest first (?limit=N, default 100, at most 1000;
// ?after=ID, the last id of the previous page; ?all=true), as {<items>, more, next}:
// how many more there are after this page, and the address of the next page (null on
// the last).

const Limit = (max: number) => Type.Union([Type.Integer({ minimum: 0, maximum: max }), Type.Null()]);
const ERRORS = [400, 401, 403, 404, 405, 406, 500];
const Any = Type.Unknown();

const AccountCreate = Type.Object({ email: Type.String({ minLength: 3, maxLength: 320 }), plan: Type.Optional(Type.String()) }, { additionalProperties: false });
const AccountPatch = Type.Object(
  {
    plan: Type.Optional(Type.String()),
    monthly_limit: Type.Optional(Limit(MAX_MONTHLY_LIMIT)),
    per_minute: Type.Optional(Limit(1_000_000)),
    pending: Type.Optional(Limit(1_000_000)),
    running: Type.Optional(Limit(1_000_000)),
    tests_per_request: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()])),
    sandbox_seconds_per_request: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()])),
    problem_storage_bytes: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }), Type.Null()])),
  },
  { additionalProperties: false },
);
/** Widget keys: the sites (scheme://host[:port]) the widget may run on. */
const AllowedOrigins = Type.Array(Type.String({ maxLength: 2048 }), { maxItems: 50 });
/** API keys: a student's key sees its account's problems' runs under their feedback. */
const StudentFlag = Type.Boolean({ description: "A student's API key: its account's problems' runs reach it under their feedback setting." });
const KeyCreate = Type.Object(
  {
    app_name: Type.String({ minLength: 1, maxLength: 200 }),
    redirect_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    kind: Type.Optional(Type.Enum(['api', 'widget'])),
    monthly_limit: Type.Optional(Limit(MAX_MONTHLY_LIMIT)),
    allowed_origins: Type.Optional(AllowedOrigins),
    student: Type.Optional(StudentFlag),
  },
  { additionalProperties: false },
);
const KeyPatch = Type.Object(
  { monthly_limit: Type.Optional(Limit(MAX_MONTHLY_LIMIT)), allowed_origins: Type.Optional(AllowedOrigins), student: Type.Optional(StudentFlag) },
  { additionalProperties: false, minProperties: 1 },
);
const MaintenanceBody = Type.Object({ enabled: Type.Boolean() }, { additionalProperties: false });

function param(ctx: ApiContext, name: string): string {
  const v = String((ctx as unknown as { params: Record<string, string> }).params[name] ?? '');
  if (!/^\d{1,18}$/.test(v)) throw new ApiError(404, 'not_found', `no such ${name.replace('_id', '')}: ${v}`);
  return v;
}

/** Operator mistakes from the accounts module: unknown ids are 404, the rest 400. */
async function domain<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AccountInputError) throw new ApiError(/^no (account|key|plan) /.test(err.message) ? 404 : 400, 'invalid_request', err.message);
    throw err;
  }
}

type Handler = (deps: ApiDeps, ctx: ApiContext) => Promise<unknown>;

const MAX_PAGE = 1000;
const DEFAULT_PAGE = 100;

/** ?limit, ?after, ?all of a list route. */
function pageRequest(ctx: ApiContext): PageRequest {
  const q = ctx.query as Record<string, unknown>;
  const text = (name: string) => (typeof q[name] === 'string' ? (q[name] as string) : undefined);
  const all = text('all');
  if (all !== undefined && all !== 'true' && all !== 'false') throw new ApiError(400, 'invalid_request', 'all must be true or false');
  const limitText = text('limit');
  if (all === 'true' && limitText !== undefined) throw new ApiError(400, 'invalid_request', 'all=true and limit do not go together');
  if (limitText !== undefined && !/^\d{1,4}$/.test(limitText)) throw new ApiError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  const limit = limitText === undefined ? DEFAULT_PAGE : Number(limitText);
  if (limit < 1 || limit > MAX_PAGE) throw new ApiError(400, 'invalid_request', `limit must be a whole number from 1 to ${MAX_PAGE}`);
  const after = text('after');
  if (after !== undefined && !/^\d{1,18}$/.test(after)) throw new ApiError(400, 'invalid_request', 'after must be the id of a listed item');
  return { limit: all === 'true' ? null : limit, after };
}

/** The page as answered: the items under their name, how many more, and the next page's address. */
function pageBody<T>(ctx: ApiContext, name: string, page: Page<T>, extra: Record<string, unknown> = {}): Record<string, unknown> {
  let next: string | null = null;
  if (page.next !== null) {
    const params = new URLSearchParams(ctx.querystring);
    params.set('after', page.next);
    next = `${ctx.path}?${params.toString()}`;
  }
  return { ...extra, [name]: page.items, more: page.more, next };
}

function adminRoute(method: RouteDef['method'], path: string, operationId: string, summary: string, run: Handler, body?: TSchema, created = false): RouteDef {
  return {
    method,
    path: `/api/admin/${path}`,
    operationId,
    summary,
    auth: 'admin',
    ...(body ? { body } : {}),
    responses: { [created ? 201 : 200]: { description: summary, schema: Any } },
    errors: ERRORS,
    handler: (deps) => async (ctx) => {
      const out = await run(deps, ctx);
      ctx.status = created ? 201 : 200;
      ctx.body = out;
    },
  };
}

async function accountWithUsage(deps: ApiDeps, id: string) {
  const account = await getAccount(deps.db, id);
  if (!account) throw new ApiError(404, 'not_found', `no such account: ${id}`);
  const usage = await usageRecord(deps.db, { accountId: id, keyId: null, now: deps.clock.now() });
  return { ...account, usage, keys: await listKeys(deps.db, id) };
}

const figures: [keyof PlanLimits, keyof typeof AccountPatch.properties][] = [
  ['monthlyLimit', 'monthly_limit'],
  ['perMinute', 'per_minute'],
  ['pending', 'pending'],
  ['running', 'running'],
  ['testsPerRequest', 'tests_per_request'],
  ['sandboxSecondsPerRequest', 'sandbox_seconds_per_request'],
  ['problemStorageBytes', 'problem_storage_bytes'],
];

export const adminRoutes: RouteDef[] = [
  adminRoute('POST', 'accounts/', 'adminCreateAccount', 'Create an account.', async ({ db }, ctx) => {
    const b = ctx.state.body as { email: string; plan?: string };
    return domain(() => createAccount(db, b.email, b.plan));
  }, AccountCreate, true),
  adminRoute('GET', 'accounts/', 'adminListAccounts', 'Accounts, newest first, a page at a time (?plan=, ?limit=, ?after=, ?all=true): {accounts, more, next}.', async ({ db }, ctx) => {
    const plan = typeof ctx.query['plan'] === 'string' ? ctx.query['plan'] : undefined;
    return pageBody(ctx, 'accounts', await listAccounts(db, { plan, page: pageRequest(ctx) }));
  }),
  adminRoute('GET', 'accounts/:account_id', 'adminGetAccount', 'An account: figures in force, usage this month, keys.', (deps, ctx) =>
    accountWithUsage(deps, param(ctx, 'account_id')),
  ),
  adminRoute('PATCH', 'accounts/:account_id', 'adminUpdateAccount', "Change an account's plan or per-account figures (null: back to the plan's).", async (deps, ctx) => {
    const id = param(ctx, 'account_id');
    const b = ctx.state.body as Record<string, number | null | string | undefined>;
    await domain(async () => {
      if (typeof b['plan'] === 'string') await setAccountPlan(deps.db, id, b['plan']);
      const overrides = Object.fromEntries(figures.filter(([, f]) => b[f] !== undefined).map(([k, f]) => [k, b[f]])) as { [K in keyof PlanLimits]?: number | null };
      await setAccountLimits(deps.db, id, overrides);
    });
    return accountWithUsage(deps, id);
  }, AccountPatch),
  adminRoute('GET', 'accounts/:account_id/keys', 'adminListKeys', "An account's keys, newest first, a page at a time (never the keys themselves): {keys, more, next}.", async ({ db }, ctx) => {
    const id = param(ctx, 'account_id');
    const page = pageRequest(ctx);
    if (!(await getAccount(db, id))) throw new ApiError(404, 'not_found', `no such account: ${id}`);
    return pageBody(ctx, 'keys', await listKeysPage(db, id, page));
  }),
  adminRoute('POST', 'accounts/:account_id/keys', 'adminCreateKey', 'Create a key; the key and its signing secret are shown once.', async ({ db }, ctx) => {
    const b = ctx.state.body as { app_name: string; redirect_url?: string | null; kind?: KeyKind; monthly_limit?: number | null; allowed_origins?: string[]; student?: boolean };
    const accountId = param(ctx, 'account_id');
    return domain(() =>
      createKey(db, {
        accountId,
        appName: b.app_name,
        redirectUrl: b.redirect_url ?? null,
        kind: b.kind ?? 'api',
        monthlyLimit: b.monthly_limit ?? null,
        allowedOrigins: b.allowed_origins ?? [],
        student: b.student ?? false,
      }),
    );
  }, KeyCreate, true),
  adminRoute('PATCH', 'keys/:key_id', 'adminUpdateKey', "Set or clear (null) a key's own monthly limit; replace a widget key's allowed origins; mark or unmark an API key as a student's (student).", async ({ db }, ctx) => {
    const b = ctx.state.body as { monthly_limit?: number | null; allowed_origins?: string[]; student?: boolean };
    const id = param(ctx, 'key_id');
    return domain(async () => {
      let key = b.monthly_limit !== undefined ? await setKeyLimit(db, id, b.monthly_limit) : undefined;
      if (b.allowed_origins !== undefined) key = await setKeyOrigins(db, id, b.allowed_origins);
      if (b.student !== undefined) key = await setKeyStudent(db, id, b.student);
      return key;
    });
  }, KeyPatch),
  adminRoute('DELETE', 'keys/:key_id', 'adminRevokeKey', 'Revoke a key at once.', async ({ db }, ctx) => {
    const id = param(ctx, 'key_id');
    return domain(() => revokeKey(db, id));
  }),
  adminRoute('GET', 'usage/', 'adminUsage', 'Submissions of every account in a month (?month=YYYY-MM, default this month), most first, a page at a time: {month, accounts, more, next}.', async ({ db, clock }, ctx) => {
    const month = typeof ctx.query['month'] === 'string' ? ctx.query['month'] : monthOf(clock.now());
    if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(month)) throw new ApiError(400, 'invalid_request', 'month must be YYYY-MM');
    const page = pageRequest(ctx);
    // Keyset on (submissions desc, account id): ?after names the last account of the previous page.
    const rank = (after: string) => sql<boolean>`(u.submissions, -a.id) < (SELECT v.submissions, -v.account_id FROM account_usage v WHERE v.account_id = ${after} AND v.month = ${month})`;
    let q = db
      .selectFrom('account_usage as u')
      .innerJoin('accounts as a', 'a.id', 'u.account_id')
      .select(['a.id', 'a.email', 'a.marketplace_user', 'a.plan', 'u.submissions'])
      .where('u.month', '=', month)
      .orderBy('u.submissions', 'desc')
      .orderBy('a.id');
    if (page.after !== undefined) q = q.where(rank(page.after));
    if (page.limit !== null) q = q.limit(page.limit);
    const rows = await q.execute();
    const items = rows.map((r) => ({ account_id: r.id, email: r.email, marketplace_user: r.marketplace_user, plan: r.plan, submissions: r.submissions }));
    const counted = await pageOf(items, page, (r) => r.account_id, async (last) =>
      Number(
        (await db.selectFrom('account_usage as u').innerJoin('accounts as a', 'a.id', 'u.account_id').select((eb) => eb.fn.countAll<string>().as('n')).where('u.month', '=', month).where(rank(last)).executeTakeFirstOrThrow()).n,
      ),
    );
    return pageBody(ctx, 'accounts', counted, { month });
  }),
  adminRoute('GET', 'maintenance', 'adminGetMaintenance', 'Whether maintenance mode is on.', async ({ db }) => ({ enabled: await readMaintenance(db) })),
  adminRoute('PUT', 'maintenance', 'adminSetMaintenance', 'Switch maintenance mode (every API host follows within a second).', async ({ db }, ctx) => {
    const { enabled } = ctx.state.body as { enabled: boolean };
    await setMaintenance(db, enabled);
    return { enabled };
  }, MaintenanceBody),
  adminRoute('POST', 'queue/reap', 'adminReapQueue', 'Requeue (or fail and refund) running jobs whose runner stopped heart-beating.', async ({ db }) => reapExpired(db)),
];
